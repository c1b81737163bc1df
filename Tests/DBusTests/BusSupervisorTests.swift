import DBus
import Synchronization
import TestSupport
import Testing

/// A supervised connection across a dbus-daemon killed and started again
/// at the same address.
@Suite struct BusSupervisorTests {
    @Test func backoffDoublesUpToItsBound() {
        let backoff = BusSupervisor.Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect(backoff.delay(beforeAttempt: 1) == .milliseconds(100))
        #expect(backoff.delay(beforeAttempt: 2) == .milliseconds(200))
        #expect(backoff.delay(beforeAttempt: 4) == .milliseconds(800))
        #expect(backoff.delay(beforeAttempt: 5) == .seconds(1))
        #expect(backoff.delay(beforeAttempt: 1000) == .seconds(1))
    }

    @Test(.timeLimit(.minutes(1))) func reconnectsWhenTheBusComesBack() async throws {
        let bus = try await RestartableBus()
        let first = try await Connection.connect(to: .address(bus.address))
        let supervisor = BusSupervisor(
            address: .address(bus.address), connection: first,
            backoff: BusSupervisor.Backoff(initial: .milliseconds(20), maximum: .milliseconds(200)))
        let reports = Reports()
        let running = Task {
            await supervisor.run { event in
                let text =
                    switch event {
                    case .disconnected: "disconnected"
                    case .reconnectFailed: "failed"
                    case .reconnected: "reconnected"
                    }
                reports.list.withLock { $0.append(text) }
            }
        }
        func waitFor(_ text: String) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                if reports.list.withLock({ $0.contains(text) }) { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        bus.kill()
        #expect(await waitFor("disconnected"))
        #expect(first.wasDroppedByBus)
        #expect(await first.waitUntilClosed().name == .disconnected)
        // The bus stays down until an attempt has failed.
        #expect(await waitFor("failed"))
        try await bus.start()
        #expect(await waitFor("reconnected"))
        let second = supervisor.connection
        #expect(second !== first)
        #expect(second.isConnected)
        #expect(try await second.nameOwner("org.freedesktop.DBus") != nil)
        #expect(reports.list.withLock { $0.first } == "disconnected")
        #expect(reports.list.withLock { $0.last } == "reconnected")

        running.cancel()
        await running.value
        #expect(second.isConnected, "the owner closes the connection, not the supervisor")
        second.close()
        bus.kill()
    }

    @Test func aConnectionClosedByItsOwnerIsNotReconnected() async throws {
        let bus = try await RestartableBus()
        let connection = try await Connection.connect(to: .address(bus.address))
        let supervisor = BusSupervisor(address: .address(bus.address), connection: connection)
        let reports = Reports()
        let running = Task { await supervisor.run { _ in reports.list.withLock { $0.append("event") } } }
        connection.close()
        await running.value
        #expect(!connection.wasDroppedByBus)
        #expect(reports.list.withLock { $0.isEmpty })
        bus.kill()
    }
}

/// What a supervisor reported, shared with the test.
private final class Reports: Sendable {
    let list = Mutex<[String]>([])
}
