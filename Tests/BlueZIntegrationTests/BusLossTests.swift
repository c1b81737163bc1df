import BlueZ
import BlueZSimulator
import DBus
import Testing
import TestSupport

/// The central's bus connection ending while bluetoothd stays (the bus
/// dropped only this client), and `attach` handing it a new one.
@Suite(.serialized) struct BusLossTests {
    @Test func aSubscriptionIsInterruptedAndResumedOnANewConnection() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        let subscription = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        let changes = central.events()
        let seen = Task { () -> [NotificationEvent] in
            var seen: [NotificationEvent] = []
            var valuesAfterResume = 0
            for try await event in subscription.events {
                seen.append(event)
                if seen.contains(.resumed), case .value = event { valuesAfterResume += 1 }
                if valuesAfterResume == 3 { break }
            }
            return seen
        }

        harness.connection.close()
        #expect(await eventually { if case .busDisconnected = central.availability { true } else { false } })
        do {
            _ = try central.device(Harness.strap)
            Issue.record("a device lookup succeeded without a bus")
        } catch {
            #expect(error.code == .bluetoothdUnavailable, "\(error)")
        }

        let replacement = try await harness.bus.connect()
        try await central.attach(replacement)
        #expect(central.availability == .available)
        let events = try await seen.value
        let statuses = events.filter { if case .value = $0 { false } else { true } }
        #expect(statuses.count == 2, "\(statuses)")
        if case .interrupted(let reason) = statuses.first {
            #expect(reason.code == .bluetoothdUnavailable, "\(reason)")
        } else {
            Issue.record("no interruption first: \(statuses)")
        }
        #expect(statuses.last == .resumed)

        var availability: [BlueZAvailability] = []
        for await event in changes {
            if case .availability(let state) = event { availability.append(state) }
            if availability.last == .available { break }
        }
        #expect(availability.count == 2, "\(availability)")
        if case .busDisconnected = availability.first {} else { Issue.record("\(availability)") }

        await central.stop()
        replacement.close()
        await harness.simulator.stop()
        harness.simulatorConnection.close()
    }
}
