import BlueZ
import GatewayCore
import Testing

/// Pairing through the core, on the simulator: the outcome of each
/// command, and the events it publishes.
@Suite struct PairingCommandTests {
    @Test func aPairingIsPublishedAndAnUnpairingForgetsTheDevice() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            let device = try await harness.core.pair(PairCommand(device: plug, timeout: .seconds(20)))
            #expect(device.paired && device.address == plug.address)
            guard case .succeeded(let published)? = recorded.pairing.last else { throw CoreHarnessError("\(recorded.pairing)") }
            #expect(published.address == plug.address && published.paired)

            try await harness.core.unpair(UnpairCommand(device: plug))
            guard case .unpaired(let adapter, let address)? = recorded.pairing.last else { throw CoreHarnessError("\(recorded.pairing)") }
            #expect(adapter == "hci0" && address == plug.address)
            #expect((try? harness.central.device(plug.address, adapter: "hci0")) == nil)
        }
    }

    @Test func aPairingThatFailsIsPublishedWithItsError() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            let stranger = try DeviceTarget(parsing: "00:11:22:33:44:55", adapter: "hci0")
            let error = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.pair(PairCommand(device: stranger, timeout: .milliseconds(300)))
            }
            // Never heard: the central waits for it until the timeout.
            #expect(error?.code == .timeout)
            guard case .failed(let adapter, let address, .bluez(let published))? = recorded.pairing.last else {
                throw CoreHarnessError("\(recorded.pairing)")
            }
            #expect(adapter == "hci0" && address == stranger.address && published.code == .timeout)
        }
    }

    @Test func anAnswerToNoQuestionIsNotFoundAndNothingIsPublished() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            #expect(harness.core.pendingPairingRequests.isEmpty)
            do throws(GatewayCommandError) {
                try harness.core.answerPairingRequest(AnswerPairingRequestCommand(id: "pr-1", answer: .accept))
                Issue.record("a question nobody asked was answered")
            } catch {
                guard case .notFound(let detail) = error else { throw CoreHarnessError("\(error)") }
                #expect(detail == "no pairing request pr-1 is waiting for an answer")
            }
            #expect(recorded.pairing.isEmpty)
        }
    }

    @Test func aQuestionIsPublishedListedAndAnsweredOnce() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            let device = try DeviceTarget(parsing: CoreHarness.plug, adapter: nil)
            let question = Task {
                await harness.core.answerAgent(PairingRequest(adapter: "hci0", device: device.address, kind: .pinCode))
            }
            var listed: [PendingPairingRequest] = []
            for _ in 0..<500 where listed.isEmpty {
                listed = harness.core.pendingPairingRequests
                if listed.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            }
            let pending = try #require(listed.first)
            do throws(GatewayCommandError) {
                try harness.core.answerPairingRequest(AnswerPairingRequestCommand(id: pending.id, answer: .passkey(1)))
                Issue.record("a passkey answered a PIN request")
            } catch {
                guard case .invalidParameter(let name, _) = error else { throw CoreHarnessError("\(error)") }
                #expect(name == "pin")
            }
            try harness.core.answerPairingRequest(AnswerPairingRequestCommand(id: pending.id, answer: .pinCode("0000")))
            #expect(await question.value == .pinCode("0000"))
            #expect(harness.core.pendingPairingRequests.isEmpty)
            let kinds = recorded.pairing.map { event -> String in
                switch event {
                case .requested(let asked): "requested \(asked.id)"
                case .answered(let answered, let accepted): "answered \(answered.id) \(accepted)"
                default: "\(event)"
                }
            }
            #expect(kinds == ["requested \(pending.id)", "answered \(pending.id) true"])
        }
    }
}
