import BlueZSimulator
import DBus
import Testing
import TestSupport

@testable import BlueZ

/// Several adapters as one pool: connection slots counted per adapter, a
/// connection that names no adapter on the one that hears the device best
/// with a free slot, a full pool queued in order until each request's
/// deadline, and kept devices moved off an adapter that is unplugged. The
/// simulator serves two adapters, each with its own Device1 object (and
/// RSSI) for the same peers, as bluetoothd does.
@Suite struct ConnectionPoolTests {
    static let near = address("C0:00:00:00:00:01")
    static let second = address("C0:00:00:00:00:02")
    static let third = address("C0:00:00:00:00:03")
    static let fourth = address("C0:00:00:00:00:04")
    static let fifth = address("C0:00:00:00:00:05")

    /// Every peer is heard by both adapters, better by hci1 (-50 against
    /// -80) unless `rssi` says otherwise for it.
    static func scenario(_ rssi: [BluetoothAddress: (hci0: Int, hci1: Int)] = [:]) throws -> Scenario {
        let devices = [near, second, third, fourth, fifth].map { device in
            let (hci0, hci1) = rssi[device] ?? (-80, -50)
            return """
                  - address: \(device)
                    heardBy: {hci0: \(hci0), hci1: \(hci1)}
                    advertising: {interval: 0.5}
                """
        }
        return try Scenario.parse(
            """
            adapters:
              - id: hci0
              - id: hci1
            devices:
            \(devices.joined(separator: "\n"))
            """)
    }

    static func harness(slots: Int, scenario: Scenario) async throws -> Harness {
        var options = Central.Options()
        options.slotLimits = SlotLimits(perAdapter: slots)
        return try await Harness(scenario: scenario, central: options)
    }

    /// Scans on both adapters until each lists every peer with an RSSI
    /// (what the choice reads); the sessions stay open for the test.
    static func hearEverything(_ harness: Harness) async throws -> [DiscoverySession] {
        let sessions = [
            try await harness.central.scan(adapter: "hci0"), try await harness.central.scan(adapter: "hci1"),
        ]
        let heard = await eventually(within: .seconds(30)) {
            let devices = harness.central.devices().filter { $0.advertisement.signalStrength != nil }
            return devices.count == 10
        }
        guard heard else { throw HarnessError("the adapters did not hear every peer: \(harness.central.devices())") }
        return sessions
    }

    static func slots(_ harness: Harness, _ adapter: String) -> AdapterSlots? {
        harness.central.connectionSlots().first { $0.adapter == adapter }
    }

    @Test(.timeLimit(.minutes(2))) func aConnectionThatNamesNoAdapterGoesToTheOneThatHearsTheDeviceBest() async throws {
        let harness = try await Self.harness(slots: 7, scenario: Self.scenario([Self.second: (-40, -90)]))
        let sessions = try await Self.hearEverything(harness)
        let near = try await harness.central.connect(Self.near, timeout: .seconds(20))
        let second = try await harness.central.connect(Self.second, timeout: .seconds(20))
        let hci0 = Self.slots(harness, "hci0")
        let hci1 = Self.slots(harness, "hci1")
        // The connected object is the device from now on (GATT lives there).
        let listed = try harness.central.device(Self.near)
        _ = sessions
        await harness.shutdown()
        #expect(near.adapter == "hci1", "-50 on hci1 against -80 on hci0")
        #expect(second.adapter == "hci0", "-40 on hci0 against -90 on hci1")
        #expect(listed.adapter == "hci1" && listed.connected)
        #expect(hci0 == AdapterSlots(adapter: "hci0", limit: 7, used: 1, queued: 0))
        #expect(hci1 == AdapterSlots(adapter: "hci1", limit: 7, used: 1, queued: 0))
        #expect(hci1?.free == 6)
    }

    @Test(.timeLimit(.minutes(2))) func aFullAdaptersNextConnectionGoesToTheOther() async throws {
        let harness = try await Self.harness(slots: 1, scenario: Self.scenario())
        let sessions = try await Self.hearEverything(harness)
        let first = try await harness.central.connect(Self.near, timeout: .seconds(20))
        let next = try await harness.central.connect(Self.second, timeout: .seconds(20))
        let usage = harness.central.connectionSlots()
        _ = sessions
        await harness.shutdown()
        #expect(first.adapter == "hci1")
        #expect(next.adapter == "hci0", "hci1 hears it better but holds its one slot")
        #expect(usage.map(\.used) == [1, 1] && usage.map(\.free) == [0, 0])
    }

    @Test(.timeLimit(.minutes(3))) func aFullPoolQueuesInOrderServesAsSlotsFreeAndRefusesPastTheDeadline() async throws {
        let harness = try await Self.harness(slots: 1, scenario: Self.scenario())
        let sessions = try await Self.hearEverything(harness)
        let central = harness.central
        #expect(try await central.connect(Self.near, timeout: .seconds(20)).adapter == "hci1")
        #expect(try await central.connect(Self.second, timeout: .seconds(20)).adapter == "hci0")

        // Both full: the third waits, then the fourth behind it.
        let third = Task { try await central.connect(Self.third, timeout: .seconds(60)).adapter }
        #expect(await eventually { Self.slots(harness, "hci1")?.queued == 1 })
        let fourth = Task { try await central.connect(Self.fourth, timeout: .seconds(60)).adapter }
        #expect(await eventually { Self.slots(harness, "hci1")?.queued == 2 })
        #expect(Self.slots(harness, "hci0")?.queued == 2, "either adapter could serve them")

        // Past its deadline a request is refused, and leaves the queue.
        let started = ContinuousClock.now
        var refusal: BlueZError?
        do {
            try await central.connect(Self.fifth, timeout: .milliseconds(300))
        } catch {
            refusal = error
        }
        let waited = ContinuousClock.now - started
        #expect(refusal?.code == .noConnectionSlot, "\(String(describing: refusal))")
        #expect(waited >= .milliseconds(300))
        #expect(Self.slots(harness, "hci1")?.queued == 2)

        // hci1's device disconnects: the oldest request takes its slot, the
        // next one still waits.
        try await central.disconnect(Self.near, timeout: .seconds(10))
        #expect(try await third.value == "hci1")
        #expect(Self.slots(harness, "hci0")?.queued == 1)
        #expect(try central.device(Self.fourth).connected == false)

        // hci0's device drops its link (no disconnect asked): that frees a
        // slot too.
        try await harness.simulator.dropConnection(Self.second.simulated)
        #expect(try await fourth.value == "hci0")
        let usage = central.connectionSlots()
        _ = sessions
        await harness.shutdown()
        #expect(usage.map(\.used) == [1, 1] && usage.map(\.queued) == [0, 0])
    }

    @Test(.timeLimit(.minutes(3))) func aKeptDeviceMovesToAnotherAdapterWhenItsAdapterIsUnplugged() async throws {
        let harness = try await Self.harness(slots: 7, scenario: Self.scenario())
        let sessions = try await Self.hearEverything(harness)
        var policy = ConnectionKeeper.Policy()
        policy.initialDelay = .milliseconds(50)
        let keeper = ConnectionKeeper(central: harness.central, policy: policy)
        keeper.keep(Self.near, adapter: "hci0")
        #expect(await eventually(within: .seconds(30)) { keeper.keptDevice(Self.near, adapter: "hci0")?.status == .connected })
        #expect(try harness.central.device(Self.near, adapter: "hci0").connected)

        try await harness.simulator.setAdapterPresent(false, adapter: "hci0")
        let moved = await eventually(within: .seconds(60)) {
            let kept = keeper.keptDevice(Self.near, adapter: "hci0")
            return kept?.status == .connected && kept?.via == "hci1"
        }
        let device = try? harness.central.device(Self.near)
        let kept = keeper.keptDevice(Self.near, adapter: "hci0")
        keeper.stop()
        // Stopping the central leaves a kept device connected, on whichever
        // adapter holds it (bluetoothd's view, asked as another client).
        await harness.central.stop()
        // bluetoothd reports a link down after Disconnect returns: watch a
        // while for it.
        let dropped = await eventually(within: .seconds(2)) {
            let reply = try? await harness.otherClientCall(
                "/org/bluez/hci1/dev_C0_00_00_00_00_01", ObjectManager.properties, "Get",
                [.string(Device1.interface.rawValue), .string("Connected")])
            return reply?.first?.bool != true
        }
        _ = sessions
        await harness.shutdown()
        #expect(!dropped, "the central's stop disconnected a kept device")
        #expect(moved, "\(String(describing: kept))")
        #expect(device?.adapter == "hci1" && device?.connected == true)
        #expect(kept?.adapter == "hci0", "still kept under its own adapter (its identity)")
    }

    @Test(.timeLimit(.minutes(2))) func theSimulatorMovesAPeerRelativeToOneAdapter() async throws {
        let harness = try await Self.harness(slots: 7, scenario: Self.scenario())
        try await SimulatorControl.export(harness.simulator, on: harness.simulatorConnection)
        let sessions = try await Self.hearEverything(harness)
        // Through the control interface, as a user's busctl would.
        _ = try await harness.connection.call(
            destination: SimulatorControl.busName, path: SimulatorControl.path, interface: SimulatorControl.interface,
            method: "SetAdapterRSSI", arguments: [.string(Self.near.description), .string("hci0"), .int16(-30)])
        let moved = await eventually(within: .seconds(20)) {
            (try? harness.central.device(Self.near, adapter: "hci0"))?.advertisement.signalStrength == -30
        }
        let other = try harness.central.device(Self.near, adapter: "hci1").advertisement.signalStrength
        let choice = harness.central.preferredAdapter(for: Self.near)
        var unknown: (any Error)?
        do {
            _ = try await harness.connection.call(
                destination: SimulatorControl.busName, path: SimulatorControl.path, interface: SimulatorControl.interface,
                method: "SetAdapterRSSI", arguments: [.string(Self.near.description), .string("hci7"), .int16(-30)])
        } catch {
            unknown = error
        }
        _ = sessions
        await harness.shutdown()
        #expect(moved)
        #expect(other == -50, "hci1 hears it as before")
        #expect(choice == "hci0", "-30 on hci0 now beats -50 on hci1")
        #expect(unknown != nil, "an adapter that does not hear the device is refused")
    }

    @Test func slotLimitsReadEveryAdapterAndOverrides() throws {
        #expect(try SlotLimits(parsing: "7") == SlotLimits(perAdapter: 7))
        #expect(try SlotLimits(parsing: "hci1=5") == SlotLimits(perAdapter: 7, overrides: ["hci1": 5]))
        let both = try SlotLimits(parsing: "3, hci1=5,hci2=10")
        #expect(both.limit(of: "hci0") == 3 && both.limit(of: "hci1") == 5 && both.limit(of: "hci2") == 10)
        #expect(both.description == "3,hci1=5,hci2=10")
        for wrong in ["", "0", "101", "seven", "hci1=", "wlan0=3", "hci1=5=6"] {
            #expect(throws: ParseError.self, "\(wrong)") { try SlotLimits(parsing: wrong) }
        }
    }
}

extension BluetoothAddress {
    /// The same address as the simulator's control API takes it.
    fileprivate var simulated: DeviceAddress {
        DeviceAddress(description) ?? DeviceAddress(bytes: [0, 0, 0, 0, 0, 0]).unsafelyUnwrapped
    }
}
