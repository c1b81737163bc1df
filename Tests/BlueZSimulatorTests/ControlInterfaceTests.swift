import DBus
import Foundation
import Glibc
import Testing
import TestSupport

/// `bluez-sim`'s outside control interface, driven with busctl and gdbus as
/// a user would.
@Suite struct ControlInterfaceTests {
    static let strap = "C4:7C:8D:6A:3E:01"

    func control(_ bus: TestBus, _ method: String, _ arguments: String...) async throws
        -> (status: Int32, output: String, error: String)
    {
        try await run(
            [
                "busctl", "--address=\(bus.address)", "call", "org.blegateway.Simulator", "/org/blegateway/simulator",
                "org.blegateway.Simulator1", method,
            ] + arguments)
    }

    @Test func stopAndStartBluetoothdOnTheSameBus() async throws {
        let bus = try TestBus()
        let sim = try ChildProcess([ExecutableTests.program, "--bus", bus.address, "--timing", "0.01"])
        defer { sim.kill() }
        #expect(await sim.waitForOutput(containing: "serving org.bluez"), "\(sim.standardError)")
        let observer = try await bus.connect()
        defer { observer.close() }
        let owner = try await observer.nameOwner("org.bluez")
        #expect(owner != nil)

        #expect(try await control(bus, "StopBluetoothd").status == 0)
        #expect(try await observer.nameOwner("org.bluez") == nil)
        #expect(try await control(bus, "IsBluetoothdRunning").output == "b false\n")
        // The control interface is no part of bluetoothd: still there.
        #expect(try await control(bus, "StartBluetoothd").status == 0)
        #expect(try await observer.nameOwner("org.bluez") != nil)
        #expect(try await control(bus, "IsBluetoothdRunning").output == "b true\n")
        let tree = try await run(["busctl", "--address=\(bus.address)", "--list", "tree", "org.bluez"])
        #expect(tree.output.contains("/org/bluez/hci0"))
        #expect(!tree.output.contains("/org/blegateway"), "the control object is not bluetoothd's")

        let gdbus = try await run([
            "gdbus", "call", "--address", bus.address, "--dest", "org.blegateway.Simulator", "--object-path",
            "/org/blegateway/simulator", "--method", "org.blegateway.Simulator1.SetPowered", "hci0", "false",
        ])
        #expect(gdbus.status == 0, "\(gdbus.error)")
        let powered = try await observer.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.bluez.Adapter1"), .string("Powered")])
        #expect(powered.first?.bool == false)

        sim.signal(SIGTERM)
        #expect(await sim.wait(timeout: .seconds(10)) == 0)
    }

    @Test func anAdapterGoesAwayAndComesBack() async throws {
        let bus = try TestBus()
        let sim = try ChildProcess([ExecutableTests.program, "--bus", bus.address, "--timing", "0.01"])
        defer { sim.kill() }
        #expect(await sim.waitForOutput(containing: "serving org.bluez"), "\(sim.standardError)")
        func tree() async throws -> String {
            try await run(["busctl", "--address=\(bus.address)", "--list", "tree", "org.bluez"]).output
        }
        #expect(try await control(bus, "SetAdapterPresent", "sb", "hci0", "false").status == 0)
        #expect(try await !tree().contains("/org/bluez/hci0"))
        #expect(try await control(bus, "SetAdapterPresent", "sb", "hci0", "true").status == 0)
        #expect(try await tree().contains("/org/bluez/hci0"))
        let unknown = try await control(bus, "SetAdapterPresent", "sb", "hci7", "true")
        #expect(unknown.status != 0 && unknown.error.contains("hci7"), "\(unknown.error)")
    }

    @Test func refusalsSayWhy() async throws {
        let bus = try TestBus()
        let sim = try ChildProcess([ExecutableTests.program, "--bus", bus.address, "--timing", "0.01"])
        defer { sim.kill() }
        #expect(await sim.waitForOutput(containing: "serving org.bluez"), "\(sim.standardError)")
        let badAddress = try await control(bus, "SetInRange", "sb", "nowhere", "false")
        #expect(badAddress.status != 0)
        #expect(badAddress.error.contains("not a Bluetooth address"), "\(badAddress.error)")
        let unknown = try await control(bus, "DropConnection", "s", "11:22:33:44:55:66")
        #expect(unknown.status != 0)
        #expect(unknown.error.contains("11:22:33:44:55:66"), "\(unknown.error)")
        #expect(try await control(bus, "SetInRange", "sb", Self.strap, "false").status == 0)
    }

    @Test func exitsWhenItsBusGoesAway() async throws {
        let bus = try await RestartableBus()
        let sim = try ChildProcess([ExecutableTests.program, "--bus", bus.address, "--timing", "0.01"])
        defer { sim.kill() }
        #expect(await sim.waitForOutput(containing: "serving org.bluez"), "\(sim.standardError)")
        bus.kill()
        #expect(await sim.wait(timeout: .seconds(20)) == 1)
        #expect(sim.standardError.contains("the bus went away"))
    }

    @Test func theHelpDescribesTheControlInterface() async throws {
        let help = try await run([ExecutableTests.program, "--help"])
        #expect(help.output.contains("org.blegateway.Simulator1") && help.output.contains("StopBluetoothd"))
    }
}
