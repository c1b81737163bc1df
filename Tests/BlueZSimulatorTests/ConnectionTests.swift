import BlueZSimulator
import DBus
import Testing

@Suite struct ConnectionTests {
    let device: InterfaceName = "org.bluez.Device1"

    @Test func connectThenServicesResolveWithGATTObjects() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.discover(strap)
        try await harness.call(strap, device, "Connect")
        #expect(try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == true)
        // Waits for what is asserted below: the signal (the recorder reads
        // signals on a connection of its own, so a Get can see the property
        // before the recorder sees the signal) and the battery plugin's
        // interface that follows it.
        try await waitUntil("services resolve, and the signals say so") {
            let signals = harness.signals.all
            return signals.contains {
                $0.path == strap && $0.body.count > 1 && $0.body[1].vardict?["ServicesResolved"]?.bool == true
            } && signals.contains { $0.member == "InterfacesAdded" && $0.body.first?.objectPath == strap }
        }
        #expect(try await harness.property(strap, "org.bluez.Device1", "ServicesResolved")?.bool == true)
        let paths = try await harness.managedPaths().map(\.rawValue)
        #expect(paths.contains(strap.rawValue + "/service0008/char0009"))  // Service Changed
        #expect(paths.contains(strap.rawValue + "/service000c/char000d/desc000f"))  // 2a37's CCC
        // Objects before ServicesResolved (with UUIDs, in one signal), and
        // Battery1 from the battery plugin.
        let signals = harness.signals.all
        let resolvedAt = signals.firstIndex {
            $0.path == strap && $0.body.count > 1 && $0.body[1].vardict?["ServicesResolved"]?.bool == true
        }
        let lastObject = signals.lastIndex { $0.member == "InterfacesAdded" && $0.body.first?.objectPath != strap }
        let battery = signals.lastIndex { $0.member == "InterfacesAdded" && $0.body.first?.objectPath == strap }
        #expect(try #require(resolvedAt) > (try #require(lastObject)))
        #expect(try #require(battery) > (try #require(resolvedAt)))
        #expect(signals[try #require(resolvedAt)].body[1].vardict?["UUIDs"] != nil)
        #expect(try await harness.property(strap, "org.bluez.Battery1", "Percentage")?.byte == 87)
        let uuids = try await harness.property(strap, "org.bluez.Device1", "UUIDs")?.strings ?? []
        #expect(uuids.contains("0000180f-0000-1000-8000-00805f9b34fb") && uuids.contains("00001800-0000-1000-8000-00805f9b34fb"))
    }

    @Test func aSecondConnectWhileConnectingFailsAsBluetoothdDoes() async throws {
        // A 1.5 s connect (0.3 s × 5), and the second call 0.3 s into it:
        // on a loaded machine the first call's task can take tens of
        // milliseconds to send its message.
        let harness = try await SimulatorHarness(timing: 5)
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.discover(strap)
        async let first = harness.error(strap, device, "Connect")
        try await Task.sleep(for: .milliseconds(300))
        let second = await harness.error(strap, device, "Connect")
        #expect(second == DBusError(ErrorName(unchecked: "org.bluez.Error.Failed"), "Operation already in progress"))
        #expect(await first == nil)
        // Connect on a connected device succeeds at once.
        #expect(await harness.error(strap, device, "Connect") == nil)
    }

    @Test func connectionsFailTheFirstNTimes() async throws {
        var scenario = TestScenarios.small
        scenario.devices[0].connection.failures = 2
        let harness = try await SimulatorHarness(scenario)
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.discover(strap)
        let expected = DBusError(ErrorName(unchecked: "org.bluez.Error.Failed"), "le-connection-abort-by-local")
        #expect(await harness.error(strap, device, "Connect") == expected)
        #expect(await harness.error(strap, device, "Connect") == expected)
        #expect(await harness.error(strap, device, "Connect") == nil)
        try await harness.simulator.failConnections(TestScenarios.address(TestScenarios.heartRate), count: 1, reason: "le-connection-timeout")
        try await harness.call(strap, device, "Disconnect")
        // Disconnect returns before the link is down; until then Connect
        // succeeds at once, as bluetoothd's does on a connected device.
        try await waitUntil("the link is down") {
            try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == false
        }
        #expect(await harness.error(strap, device, "Connect")?.message == "le-connection-timeout")
    }

    @Test func disconnectKeepsTheAttributeCache() async throws {
        // Real latencies: Connected turns false about a second after the
        // reply, a window that a loaded machine cannot close by accident.
        let harness = try await SimulatorHarness(timing: 1)
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        harness.signals.clear()
        try await harness.call(strap, device, "Disconnect")
        // As bluetoothd 5.66 (probe-disconnect.py): ServicesResolved false,
        // then the reply, then Connected false in a signal of its own.
        // (RSSI changes come too, the discovery still running, and the
        // ServicesResolved true that connect(_:) polled may arrive late.)
        @Sendable func linkChanges() -> [[String: Value]] {
            harness.signals.changes(at: strap, "org.bluez.Device1").map(\.changed)
                .map { $0.filter { ["Connected", "ServicesResolved"].contains($0.key) && $0.value == .boolean(false) } }
                .filter { !$0.isEmpty }
        }
        // The recorder has a connection of its own: wait until it has seen
        // the signal that came before the reply.
        try await waitUntil("ServicesResolved false is recorded") { !linkChanges().isEmpty }
        #expect(linkChanges() == [["ServicesResolved": .boolean(false)]])
        #expect(try await harness.property(strap, device.rawValue, "Connected")?.bool == true)
        try await waitUntil("Connected turns false") {
            harness.signals.changes(at: strap, "org.bluez.Device1").contains { $0.changed["Connected"]?.bool == false }
        }
        #expect(linkChanges() == [["ServicesResolved": .boolean(false)], ["Connected": .boolean(false)]])
        let body = try ObjectPath(TestScenarios.heartRatePath + "/service000c/char0010")
        #expect(try await harness.managedPaths().contains(body))
        let read = await harness.error(body, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
        #expect(read == DBusError(ErrorName(unchecked: "org.bluez.Error.Failed"), "Not connected"))
        #expect(try await harness.property(strap, "org.bluez.Battery1", "Percentage") == nil)
        // Disconnecting a disconnected device is fine.
        #expect(await harness.error(strap, device, "Disconnect") == nil)
    }

    @Test func theConnectedSignalCanGoMissingAsWithTheRealDaemon() async throws {
        let harness = try await SimulatorHarness(options: SimulatorOptions(connectedSignal: .never))
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        #expect(try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == true)
        #expect(!harness.signals.changes(at: strap, "org.bluez.Device1").contains { $0.changed["Connected"] != nil })
    }

    @Test func byDefaultTheConnectedSignalIsMissingAsMostOftenWithTheRealDaemon() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        #expect(try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == true)
        #expect(!harness.signals.changes(at: strap, "org.bluez.Device1").contains { $0.changed["Connected"] != nil })
    }

    @Test func aScenarioCanAskForTheConnectedSignal() async throws {
        var scenario = TestScenarios.small
        scenario.connectedSignal = .always
        let harness = try await SimulatorHarness(scenario)
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        try await waitUntil("PropertiesChanged(Connected=true)") {
            harness.signals.changes(at: strap, "org.bluez.Device1").contains { $0.changed["Connected"]?.bool == true }
        }
    }

    @Test func leavingRangeDropsTheConnection() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        try await harness.simulator.setInRange(false, TestScenarios.address(TestScenarios.heartRate))
        try await waitUntil("the link drops") {
            try await harness.property(strap, "org.bluez.Device1", "Connected")?.bool == false
        }
        #expect(await harness.error(strap, device, "Connect")?.message == "le-connection-timeout")
    }

    @Test func aScenarioDeviceLeavesAndReturns() async throws {
        var scenario = TestScenarios.small
        scenario.devices[3].range = Scenario.Range(leaveAfter: 10, returnAfter: 10)  // × 0.01: 0.1 s
        let harness = try await SimulatorHarness(scenario, options: SimulatorOptions(temporaryTimeout: 10))
        defer { Task { await harness.close() } }
        let beacon = try ObjectPath(TestScenarios.beaconPath)
        try await harness.startDiscovery()
        try await waitUntil("the beacon is gone once") { harness.signals.removed.contains(beacon) }
        try await waitUntil("and back") { harness.signals.added.filter { $0 == beacon }.count >= 2 }
    }

    @Test func removingAConnectedDeviceDisconnectsItFirst() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await harness.connect(strap)
        // (A discovery still running would find it again at once.)
        try await harness.stopDiscovery()
        try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(strap)])
        #expect(try await !harness.managedPaths().contains(strap))
        // (The other devices expire meanwhile, 0.3 s after the stop: not `.last`.)
        try await waitUntil("the device is removed") { harness.signals.removed.contains(strap) }
        let events = harness.signals.all.compactMap { message -> String? in
            guard message.path == strap || message.body.first?.objectPath == strap else { return nil }
            if message.member == "InterfacesRemoved" { return (message.body[1].strings ?? []).joined(separator: ",") }
            if message.body.count > 1, message.body[1].vardict?["Connected"]?.bool == false { return "disconnected" }
            return nil
        }
        #expect(events.suffix(3) == ["org.bluez.Battery1", "disconnected", "org.bluez.Device1"])
    }

    @Test func aTrustedDiscoveredDeviceIsStillForgottenAtPowerOff() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let plug = try ObjectPath(TestScenarios.plugPath)
        try await harness.discover(plug)
        try await harness.set(plug, "org.bluez.Device1", "Trusted", .boolean(true))
        try await harness.set(SimulatorHarness.adapter, "org.bluez.Adapter1", "Powered", .boolean(false))
        #expect(try await !harness.managedPaths().contains(plug))
    }

    @Test func pairingBondsAndCannotBeDoneTwice() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let plug = try ObjectPath(TestScenarios.plugPath)
        try await harness.discover(plug)
        #expect(await harness.error(plug, device, "CancelPairing")?.name.rawValue == "org.bluez.Error.DoesNotExist")
        try await harness.call(plug, device, "Pair")
        #expect(try await harness.property(plug, "org.bluez.Device1", "Paired")?.bool == true)
        #expect(try await harness.property(plug, "org.bluez.Device1", "Bonded")?.bool == true)
        #expect(try await harness.property(plug, "org.bluez.Device1", "Connected")?.bool == true)
        let again = await harness.error(plug, device, "Pair")
        #expect(again == DBusError(ErrorName(unchecked: "org.bluez.Error.AlreadyExists"), "Already Exists"))
    }
}
