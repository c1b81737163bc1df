import BlueZ
import BlueZSimulator
import DBus
import TestSupport
import Testing

@Suite(.serialized) struct StartAndAdapterTests {
    @Test func mirrorsTheSimulatorsAdapterAndDevices() async throws {
        let harness = try await Harness()
        let adapters = harness.central.adapters()
        #expect(adapters.map(\.id) == ["hci0"])
        #expect(adapters.first?.state == .poweredOn)
        #expect(harness.central.adapterState() == .poweredOn)
        #expect(harness.central.adapterState("hci7") == .unavailable)
        #expect(throws: BlueZError.self) { try harness.central.adapter("hci7") }
        await harness.shutdown()
    }

    @Test func powerOffAndOnWithEvents() async throws {
        let harness = try await Harness()
        let events = harness.central.events()
        let off = try await harness.central.setPowered(false)
        #expect(off.state == .poweredOff)
        #expect(harness.central.adapterState() == .poweredOff)
        await #expect { try await harness.central.scan() } throws: { ($0 as? BlueZError)?.code == .poweredOff }
        let on = try await harness.central.setPowered(true)
        #expect(on.state == .poweredOn)
        let seen = await collect(events, for: .milliseconds(100))
        #expect(seen.contains(.adapterState(adapter: "hci0", .poweredOff)))
        #expect(seen.contains(.adapterState(adapter: "hci0", .poweredOn)))
        await harness.shutdown()
    }

    @Test func noBluetoothdMeansUnavailableUntilItAppears() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        let central = Central(connection: connection)
        try await central.start()
        #expect(!central.isBluetoothdRunning)
        #expect(central.adapterState() == .unavailable)
        #expect { try central.adapter() } throws: { ($0 as? BlueZError)?.code == .bluetoothdUnavailable }
        let simulatorConnection = try await bus.connect()
        var scenario = Scenario.default
        scenario.timing = 0.02
        let simulator = try await SimulatedBlueZ.start(on: simulatorConnection, scenario: scenario)
        #expect(await eventually { central.adapterState() == .poweredOn })
        await central.stop()
        await simulator.stop()
        connection.close()
        simulatorConnection.close()
    }
}
