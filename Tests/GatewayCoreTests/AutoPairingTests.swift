import BlueZ
import BlueZSimulator
import GatewayCore
import Testing

/// GATT commands with `PairingPolicy.auto`, on the simulator: the plug's
/// schedule can be read and written only once paired.
@Suite struct AutoPairingTests {
    /// The plug's schedule, which needs an encrypted link.
    static let schedule = "0000ff03-0000-1000-8000-00805f9b34fb"

    /// The default world, with a plug that refuses to pair: bluetoothd's
    /// own attempt (Just Works, on an Insufficient Encryption answer) fails,
    /// and the schedule stays out of reach.
    static var refusingPlug: Scenario {
        var scenario = Scenario.default
        for index in scenario.devices.indices where scenario.devices[index].address.description == CoreHarness.plug {
            scenario.devices[index].pairing.accept = false
        }
        return scenario
    }

    @Test func aRefusalForWantOfPairingIsTheAnswerUnlessAutoPairingIsAsked() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(scenario: Self.refusingPlug, events: recorded) { harness in
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            let target = try CharacteristicTarget(device: plug, parsing: Self.schedule, service: nil)
            let read = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.read(ReadCommand(characteristic: target, timeout: .seconds(10)))
            }
            let write = await bluezFailure { () async throws(GatewayCommandError) in
                try await harness.core.write(WriteCommand(characteristic: target, value: [0x07], timeout: .seconds(10)))
            }
            #expect(read?.code == .notPaired && write?.code == .notPaired)
            #expect(recorded.pairing.isEmpty)

            // Asked to, the core pairs: the plug refuses, and that is the
            // answer (the operation is not run a second time in vain).
            let autoRead = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.read(ReadCommand(characteristic: target, timeout: .seconds(10), pairing: .auto))
            }
            #expect(autoRead?.code == .authenticationFailed)
            let autoWrite = await bluezFailure { () async throws(GatewayCommandError) in
                try await harness.core.write(
                    WriteCommand(characteristic: target, value: [0x07], timeout: .seconds(10), pairing: .auto))
            }
            #expect(autoWrite?.code == .authenticationFailed)
            let failures = recorded.pairing.filter { if case .failed = $0 { true } else { false } }
            #expect(failures.count == 2 && recorded.pairing.count == 2, "\(recorded.pairing)")
        }
    }

    @Test func anOperationThatNeedsNoPairingRunsOnceWithAutoPairing() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            let relay = try CharacteristicTarget(device: plug, parsing: CoreHarness.relay, service: nil)
            try await harness.core.write(
                WriteCommand(characteristic: relay, value: [0x01], timeout: .seconds(10), pairing: .auto))
            #expect(try await harness.core.read(ReadCommand(characteristic: relay, pairing: .auto)) == [0x01])
            #expect(recorded.pairing.isEmpty)
            #expect(try harness.central.device(plug.address, adapter: "hci0").paired == false)
        }
    }

    @Test func aPairingModeIsAutoOrNone() throws {
        #expect(try PairingPolicy(parsing: nil) == .never)
        #expect(try PairingPolicy(parsing: "auto") == .auto)
        do throws(GatewayCommandError) {
            _ = try PairingPolicy(parsing: "always")
            Issue.record("'always' was taken as a pairing mode")
        } catch {
            guard case .invalidParameter(let name, let reason) = error else { throw CoreHarnessError("\(error)") }
            #expect(name == "pair" && reason == "'always' is not a pairing mode (auto)")
        }
    }
}
