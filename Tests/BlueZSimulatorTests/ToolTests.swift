import Foundation
import BlueZSimulator
import DBus
import Glibc
import Testing
import TestSupport

/// The simulator seen through real programs: bluetoothctl (BlueZ 5.66's own
/// client, talking to org.bluez on the "system" bus it is pointed at) and
/// busctl.
@Suite struct ToolTests {
    @Test func bluetoothctlScansConnectsReadsNotifiesAndWrites() async throws {
        // bluetoothctl's steps take seconds on a loaded machine: the devices
        // it discovered are kept for the whole session (300 s), not the
        // harness's scaled-down 3 s, so "scan off" then "connect" finds
        // the device as it would on bluetoothd's 30 s.
        let harness = try await SimulatorHarness(options: SimulatorOptions(temporaryTimeout: 30_000))
        defer { Task { await harness.close() } }
        let ctl = try ChildProcess(["bluetoothctl"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": harness.bus.address])
        defer { ctl.kill() }
        func step(_ command: String?, expect texts: [String]) async throws {
            try await ctl.step(command, expect: texts)
        }
        try await step(nil, expect: ["Agent registered"])
        try await step("list", expect: ["Controller 00:1A:7D:DA:71:13 blegateway [default]"])
        try await step("show", expect: ["Powered: yes", "Roles: central", "SupportedInstances: 0x05 (5)"])
        try await step("scan on", expect: ["Discovery started", "Device C4:7C:8D:6A:3E:01 Polar H10 6A3E01"])
        try await step("scan off", expect: ["Discovery stopped"])
        try await step("info C4:7C:8D:6A:3E:01", expect: ["Name: Polar H10 6A3E01", "Appearance: 0x0341", "Heart Rate"])
        try await step("connect C4:7C:8D:6A:3E:01", expect: ["Connection successful", "ServicesResolved: yes"])
        try await step("menu gatt", expect: ["list-attributes"])
        try await step(
            "list-attributes",
            expect: ["/org/bluez/hci0/dev_C4_7C_8D_6A_3E_01/service000c/char000d", "Heart Rate Measurement", "Body Sensor Location"])
        try await step("select-attribute 00002a38-0000-1000-8000-00805f9b34fb", expect: ["char0010]"])
        try await step("read", expect: ["Attempting to read", "  01 "])
        try await step("select-attribute /org/bluez/hci0/dev_C4_7C_8D_6A_3E_01/service000c/char000d", expect: ["char000d]"])
        try await step("notify on", expect: ["Notify started", "Value:", "  06 "])
        try await step("notify off", expect: ["Notify stopped"])
        try await step("select-attribute 00002a39-0000-1000-8000-00805f9b34fb", expect: ["char0012]"])
        try await step("write 0x01", expect: ["Attempting to write"])
        try await step("write 0x02", expect: ["Failed to write: org.bluez.Error.Failed"])
        try await step("back", expect: ["Menu main"])
        try await step("disconnect C4:7C:8D:6A:3E:01", expect: ["Successful disconnected"])
        ctl.write("quit\n")
        #expect(await ctl.wait(timeout: .seconds(10)) == 0)
    }

    @Test func busctlSeesBluetoothdsTree() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": harness.bus.address]
        try await harness.connect(try ObjectPath(TestScenarios.heartRatePath))
        let tree = try await run(["busctl", "--system", "--list", "tree", "org.bluez"], environment: environment)
        #expect(tree.status == 0, "\(tree.error)")
        for path in [
            "/org/bluez", "/org/bluez/hci0", TestScenarios.heartRatePath,
            TestScenarios.heartRatePath + "/service000c/char000d/desc000f",
        ] {
            #expect(tree.output.split(separator: "\n").contains(Substring(path)), "\(path) not in\n\(tree.output)")
        }
        let adapter = try await run(["busctl", "--system", "introspect", "org.bluez", "/org/bluez/hci0"], environment: environment)
        for member in [".StartDiscovery", ".SetDiscoveryFilter", ".GetDiscoveryFilters", ".Powered", "org.bluez.GattManager1"] {
            #expect(adapter.output.contains(member), "\(member) not in\n\(adapter.output)")
        }
        let device = try await run(
            ["busctl", "--system", "introspect", "org.bluez", TestScenarios.heartRatePath], environment: environment)
        for member in [".Pair", ".CancelPairing", ".ServicesResolved", ".ManufacturerData", "org.bluez.Battery1"] {
            #expect(device.output.contains(member), "\(member) not in\n\(device.output)")
        }
        let read = try await run(
            [
                "busctl", "--system", "call", "org.bluez", TestScenarios.heartRatePath + "/service000c/char0010",
                "org.bluez.GattCharacteristic1", "ReadValue", "a{sv}", "0",
            ], environment: environment)
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ay 1 1")
    }
}
