import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// bluetoothctl, with its own agent, pairs a simulated device: the
/// simulator asks the agent what bluetoothd would.
@Suite struct PairingToolTests {
    @Test func bluetoothctlConfirmsAPasskeyAndPairs() async throws {
        var scenario = TestScenarios.small
        for index in scenario.devices.indices where scenario.devices[index].address.description == TestScenarios.plug {
            scenario.devices[index].pairing = Scenario.Pairing(delay: 0.5, ioCapability: "DisplayYesNo", passkey: 123_456)
        }
        // bluetoothctl's steps take seconds on a loaded machine: the
        // devices it discovered are kept for the whole session (300 s), not
        // the harness's scaled-down 3 s, so "scan off" then "pair" finds the
        // device as it would on bluetoothd's 30 s (as in ToolTests).
        let harness = try await SimulatorHarness(scenario, options: SimulatorOptions(temporaryTimeout: 30_000))
        defer { Task { await harness.close() } }
        let ctl = try ChildProcess(["bluetoothctl"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": harness.bus.address])
        defer { ctl.kill() }
        func step(_ command: String?, expect text: String) async throws {
            try await ctl.step(command, expect: [text])
        }
        try await step(nil, expect: "Agent registered")
        try await step("agent off", expect: "Agent unregistered")
        try await step("agent KeyboardDisplay", expect: "Agent registered")
        try await step("default-agent", expect: "Default agent request successful")
        try await step("scan on", expect: "Device \(TestScenarios.plug)")
        try await step("scan off", expect: "Discovery stopped")
        try await step("pair \(TestScenarios.plug)", expect: "Confirm passkey 123456")
        try await step("yes", expect: "Pairing successful")
        try await step("info \(TestScenarios.plug)", expect: "Paired: yes")
        ctl.write("quit\n")
        #expect(await ctl.wait(timeout: .seconds(10)) == 0)
    }
}
