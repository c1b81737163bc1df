import BlueZSimulator
import DBus
import Testing

@Suite struct ControlTests {
    @Test func addedAndRemovedDevicesComeAndGo() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let address = try #require(DeviceAddress("11:22:33:44:55:66"))
        let path = ObjectPath(unchecked: "/org/bluez/hci0/dev_11_22_33_44_55_66")
        try await harness.simulator.addDevice(
            Scenario.Device(address: address, name: "Added", advertising: Scenario.Advertising(interval: 0.05)))
        try await harness.discover(path)
        #expect(try await harness.property(path, "org.bluez.Device1", "Name")?.string == "Added")
        try await harness.simulator.removeDevice(address)
        #expect(try await !harness.managedPaths().contains(path))
        await #expect(throws: SimulatorError.self) { try await harness.simulator.removeDevice(address) }
        // A paired device is on the bus at once, without discovery.
        try await harness.simulator.addDevice(Scenario.Device(address: address, paired: true))
        #expect(try await harness.property(path, "org.bluez.Device1", "Paired")?.bool == true)
        #expect(await harness.simulator.exportedDevices().contains(address))
    }

    @Test func restartDropsTheNameAndComesBackAsBluetoothdDoes() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let owners = try await harness.client.signals(
            matching: MatchRule(sender: .bus, interface: .bus, member: "NameOwnerChanged", arguments: [0: "org.bluez"]))
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        let beacon = try ObjectPath(TestScenarios.beaconPath)
        try await harness.connect(strap)
        try await harness.call(strap, "org.bluez.Device1", "Pair")
        try await harness.discover(beacon)
        try await harness.simulator.restart()
        // The name goes (new owner "") and comes back. (The stream may also
        // hold the first acquisition, which reached this connection
        // through the recorder's owner tracking: skip to the loss.)
        var iterator = owners.makeAsyncIterator()
        var lost = try #require(try await iterator.next())
        while lost.body[2].string != "" { lost = try #require(try await iterator.next()) }
        let regained = try #require(try await iterator.next())
        #expect(lost.body[1].string == harness.server.uniqueName.rawValue && regained.body[1].string == "")
        #expect(regained.body[2].string == harness.server.uniqueName.rawValue)
        // The bond survives (from storage), the connection and the discovered beacon do not.
        let paths = try await harness.managedPaths()
        #expect(paths.contains(strap) && !paths.contains(beacon))
        #expect(paths.contains(ObjectPath(unchecked: TestScenarios.heartRatePath + "/service000c/char000d")))
        #expect(try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == false)
        #expect(try await harness.property(strap, "org.bluez.Device1", "Paired")?.bool == true)
        #expect(try await harness.property(SimulatorHarness.adapter, "org.bluez.Adapter1", "Discovering")?.bool == false)
        #expect(await harness.simulator.statistics.restarts == 1)
        try await harness.connect(strap)
    }

    @Test func poweringOffDropsConnectionsAndForgetsDiscoveredDevices() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        try await harness.simulator.setPowered(false)
        #expect(try await harness.property(SimulatorHarness.adapter, "org.bluez.Adapter1", "Powered")?.bool == false)
        #expect(try await harness.property(SimulatorHarness.adapter, "org.bluez.Adapter1", "Discovering")?.bool == false)
        // Connected devices stop being temporary only while connected: once
        // the link drops with the power, the device is forgotten.
        #expect(try await !harness.managedPaths().contains(strap))
        try await harness.simulator.setPowered(true)
        try await harness.connect(strap)
    }

    @Test func aPeripheralDroppingTheLinkIsSeen() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        try await harness.simulator.dropConnection(TestScenarios.address(TestScenarios.heartRate))
        #expect(try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == false)
        #expect(try await harness.property(strap, "org.bluez.Device1", "ServicesResolved")?.bool == false)
    }

    @Test func agentsRegisterAsWithBluetoothd() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let manager: InterfaceName = "org.bluez.AgentManager1"
        let agent = Value.objectPath("/test/agent")
        try await harness.call("/org/bluez", manager, "RegisterAgent", [agent, .string("KeyboardDisplay")])
        #expect(
            await harness.error("/org/bluez", manager, "RegisterAgent", [agent, .string("KeyboardDisplay")])?.name.rawValue
                == "org.bluez.Error.AlreadyExists")
        try await harness.call("/org/bluez", manager, "RequestDefaultAgent", [agent])
        try await harness.call("/org/bluez", manager, "UnregisterAgent", [agent])
        #expect(
            await harness.error("/org/bluez", manager, "UnregisterAgent", [agent])?.name.rawValue
                == "org.bluez.Error.DoesNotExist")
        #expect(
            await harness.error("/org/bluez", manager, "RegisterAgent", [agent, .string("Telepathy")])?.name.rawValue
                == "org.bluez.Error.InvalidArguments")
    }
}
