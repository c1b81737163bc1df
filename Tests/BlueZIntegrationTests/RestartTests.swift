import BlueZ
import BlueZSimulator
import DBus
import TestSupport
import Testing

/// bluetoothd stopping and starting again (a new owner of org.bluez)
/// while consumers scan and subscribe.
@Suite(.serialized) struct RestartTests {
    @Test func restartInTheMiddleOfASubscriptionAndAScan() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        let subscription = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        // A sink's lease on the same subscription learns the end as a type.
        let sinkEnd = Recorded<SubscriptionEnd?>(nil)
        let lease = try await central.subscribe(
            to: .uuid(Harness.measurement), of: Harness.strap,
            sink: NotificationSink(receive: { _ in }, ended: { end in sinkEnd.value.withLock { $0 = end } }))
        let session = try await central.scan(filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate]))
        let subscriptionEnd = Task { () -> BlueZError? in
            do {
                for try await _ in subscription {}
                return nil
            } catch { return error as? BlueZError }
        }
        let sessionEvents = Task { () -> [DiscoveryEvent] in
            var events: [DiscoveryEvent] = []
            for await event in session {
                events.append(event)
                if case .resumed = event { break }
            }
            return events
        }
        let callsBefore = harness.connection.statistics.messagesSent

        await harness.simulator.stop()
        #expect(await eventually { central.adapterState() == .unavailable })
        let simulatorConnection = try await harness.bus.connect()
        var scenario = Scenario.default
        scenario.timing = 0.02
        let restarted = try await SimulatedBlueZ.start(on: simulatorConnection, scenario: scenario)

        #expect(await eventually { central.adapterState() == .poweredOn })
        // The subscription did not vanish silently: the device is no longer
        // connected after the restart, so it ended, with that reason.
        let ending = await subscriptionEnd.value
        #expect(ending?.code == .notConnected)
        #expect(ending?.message.contains("restarted") == true)
        #expect(await eventually { sinkEnd.value.withLock { $0?.reason } == .bluezRestarted })
        #expect(sinkEnd.value.withLock { $0?.error } == ending)
        lease.cancel()
        // The scan was interrupted, then resumed by itself.
        let events = await value(of: sessionEvents, within: .seconds(10))
        #expect(events.contains { if case .interrupted = $0 { true } else { false } })
        #expect(events.contains(.resumed))
        #expect(await eventually { central.adapters().first?.discovering == true })
        // One GetManagedObjects (and the re-established discovery) went out.
        #expect(harness.connection.statistics.messagesSent - callsBefore >= 3)

        await central.stop()
        harness.connection.close()
        await restarted.stop()
        simulatorConnection.close()
        harness.simulatorConnection.close()
    }
}
