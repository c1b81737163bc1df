import BlueZ
import BlueZSimulator
import DBus
import Synchronization
import Testing
import TestSupport

/// Pairing through the gateway's agent on the simulator: each IO
/// capability's method, and each outcome.
@Suite(.serialized) struct PairingTests {
    static let schedule = BluetoothUUID("0000ff03-0000-1000-8000-00805f9b34fb").unsafelyUnwrapped

    /// The default scenario with the plug pairing as `pairing` says.
    static func harness(_ pairing: Scenario.Pairing) async throws -> Harness {
        var scenario = Scenario.default
        for index in scenario.devices.indices where scenario.devices[index].address.description == Harness.plug.description {
            scenario.devices[index].pairing = pairing
        }
        return try await Harness(scenario: scenario)
    }

    /// An agent whose answers come from `answer`; it records the questions.
    static func agent(
        _ harness: Harness, _ capability: AgentCapability,
        answer: @escaping @Sendable (PairingRequest) async -> PairingAnswer
    ) async throws -> (PairingAgent, Recorder) {
        let recorder = Recorder()
        let agent = PairingAgent(central: harness.central, configuration: .init(capability: capability)) { request in
            recorder.record(request)
            return await answer(request)
        }
        try await agent.start()
        return (agent, recorder)
    }

    final class Recorder: Sendable {
        let requests = Mutex<[PairingRequest.Kind]>([])
        func record(_ request: PairingRequest) { requests.withLock { $0.append(request.kind) } }
        var kinds: [PairingRequest.Kind] { requests.withLock { $0 } }
    }

    @Test func justWorksAsksNothingAndOpensEncryptedCharacteristics() async throws {
        let harness = try await Self.harness(Scenario.Pairing(delay: 0.5))
        let (agent, recorder) = try await Self.agent(harness, .noInputNoOutput) { _ in .reject }
        #expect(agent.isRegistered)
        try await harness.discover(Harness.plug)
        let device = try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        #expect(device.paired && device.bonded)
        #expect(recorder.kinds.isEmpty)
        #expect(try await harness.central.read(.uuid(Self.schedule), of: Harness.plug) == [0, 0])
        await agent.stop()
        await harness.shutdown()
    }

    @Test func numericComparisonAsksForConfirmation() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "DisplayYesNo", passkey: 4321))
        let (agent, recorder) = try await Self.agent(harness, .displayYesNo) { request in
            request.kind == .confirmation(4321) ? .accept : .reject
        }
        try await harness.discover(Harness.plug)
        let device = try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        #expect(device.paired)
        #expect(recorder.kinds == [.confirmation(4321)])
        await agent.stop()
        await harness.shutdown()
    }

    @Test func passkeyEntryTakesTheDevicesPasskey() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "DisplayOnly", passkey: 654_321))
        let (agent, recorder) = try await Self.agent(harness, .keyboardOnly) { _ in .passkey(654_321) }
        try await harness.discover(Harness.plug)
        #expect(try await harness.central.pair(Harness.plug, timeout: .seconds(20)).paired)
        #expect(recorder.kinds == [.passkey])
        await agent.stop()
        await harness.shutdown()
    }

    @Test func wrongPasskeyFailsAuthentication() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "DisplayOnly", passkey: 654_321))
        let (agent, _) = try await Self.agent(harness, .keyboardDisplay) { _ in .passkey(111_111) }
        try await harness.discover(Harness.plug)
        await #expect {
            try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        } throws: { ($0 as? BlueZError)?.code == .authenticationFailed }
        #expect(try harness.central.device(Harness.plug).paired == false)
        await agent.stop()
        await harness.shutdown()
    }

    @Test func passkeyDisplayIsShownToTheAgent() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "KeyboardOnly"))
        let (agent, recorder) = try await Self.agent(harness, .displayOnly) { _ in .accept }
        try await harness.discover(Harness.plug)
        #expect(try await harness.central.pair(Harness.plug, timeout: .seconds(20)).paired)
        let kinds = recorder.kinds
        #expect(kinds.count == 1)
        if case .displayPasskey(let passkey, entered: 0)? = kinds.first {
            #expect(passkey <= 999_999)
        } else {
            Issue.record("expected DisplayPasskey, got \(kinds)")
        }
        await agent.stop()
        await harness.shutdown()
    }

    @Test func rejectedConfirmationFailsThePairing() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "KeyboardDisplay", passkey: 1))
        let (agent, recorder) = try await Self.agent(harness, .keyboardDisplay) { _ in .reject }
        try await harness.discover(Harness.plug)
        await #expect {
            try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        } throws: { ($0 as? BlueZError)?.code == .authenticationFailed }
        #expect(recorder.kinds == [.confirmation(1)])
        await agent.stop()
        await harness.shutdown()
    }

    @Test func deviceThatRefusesLeavesEncryptedCharacteristicsClosed() async throws {
        let harness = try await Self.harness(Scenario.Pairing(delay: 0.5, accept: false))
        let (agent, _) = try await Self.agent(harness, .noInputNoOutput) { _ in .reject }
        try await harness.connected(Harness.plug)
        await #expect {
            try await harness.central.read(.uuid(Self.schedule), of: Harness.plug)
        } throws: { error in
            let error = error as? BlueZError
            return error?.code == .notPaired && error?.dbusName == "org.bluez.Error.NotPermitted"
        }
        await #expect {
            try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        } throws: { ($0 as? BlueZError)?.code == .authenticationFailed }
        await agent.stop()
        await harness.shutdown()
    }

    @Test func deviceThatNeverAnswersTimesOut() async throws {
        // 50 s of SMP timeout at timing 0.02: one second.
        let harness = try await Self.harness(Scenario.Pairing(responds: false, timeout: 50))
        let (agent, _) = try await Self.agent(harness, .noInputNoOutput) { _ in .reject }
        try await harness.discover(Harness.plug)
        await #expect {
            try await harness.central.pair(Harness.plug, timeout: .seconds(20))
        } throws: { ($0 as? BlueZError)?.code == .pairingTimeout }
        await agent.stop()
        await harness.shutdown()
    }

    @Test func cancelPairingCancelsTheAgentsQuestion() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "DisplayOnly"))
        let asked = AsyncStream<Void>.makeStream()
        let (agent, _) = try await Self.agent(harness, .keyboardOnly) { _ in
            asked.continuation.yield()
            // Waits until bluetoothd's Cancel cancels the question.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
            return .cancel
        }
        try await harness.discover(Harness.plug)
        let pairing = Task { try await harness.central.pair(Harness.plug, timeout: .seconds(30)) }
        var iterator = asked.stream.makeAsyncIterator()
        await iterator.next()
        try await harness.central.cancelPairing(Harness.plug)
        await #expect {
            try await pairing.value
        } throws: { ($0 as? BlueZError)?.code == .pairingCancelled }
        await agent.stop()
        await harness.shutdown()
    }

    @Test func agentIsRegisteredAgainAfterBluetoothdRestarts() async throws {
        let harness = try await Self.harness(Scenario.Pairing(ioCapability: "DisplayYesNo", passkey: 7))
        let (agent, recorder) = try await Self.agent(harness, .displayYesNo) { _ in .accept }
        try await harness.simulator.restart()
        #expect(await eventually(within: .seconds(20)) { harness.central.availability == .available && agent.isRegistered })
        try await harness.discover(Harness.plug)
        #expect(try await harness.central.pair(Harness.plug, timeout: .seconds(20)).paired)
        #expect(recorder.kinds == [.confirmation(7)])
        await agent.stop()
        await harness.shutdown()
    }

    @Test func trustedAndBlockedAreSet() async throws {
        let harness = try await Harness()
        try await harness.discover(Harness.plug)
        var device = try await harness.central.setDeviceFlags(Harness.plug, trusted: true)
        #expect(device.trusted && !device.blocked)
        device = try await harness.central.setDeviceFlags(Harness.plug, trusted: false, blocked: true)
        #expect(!device.trusted && device.blocked)
        await harness.shutdown()
    }
}
