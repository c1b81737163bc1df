import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// `Connection.Configuration.endOfTurn`: work a connection's loop thread
/// does once per turn, owned by the connection.
@Suite struct EndOfTurnTests {
    final class Turns: Sendable {
        let onLoopThread = Atomic(0)
        let elsewhere = Atomic(0)

        func count() {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            if name.hasPrefix("dbus-loop") {
                onLoopThread.add(1, ordering: .relaxed)
            } else {
                elsewhere.add(1, ordering: .relaxed)
            }
        }
    }

    final class Flag: Sendable {
        let isSet = Atomic(false)
        var value: Bool { isSet.load(ordering: .relaxed) }
    }

    /// Tells whether the hook it sits in was let go.
    final class Sentinel: Sendable {
        let released: Flag
        init(_ released: Flag) { self.released = released }
        deinit { released.isSet.store(true, ordering: .relaxed) }
    }

    @Test func theHookRunsOnTheLoopThreadAfterEachTurn() async throws {
        let turns = Turns()
        let bus = try TestBus()
        let connection = try await Connection.connect(
            to: .address(bus.daemon.address), configuration: Connection.Configuration(endOfTurn: { turns.count() }))
        defer { connection.close() }
        let before = turns.onLoopThread.load(ordering: .relaxed)
        for _ in 0..<3 {
            _ = try await connection.call(
                destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "GetId")
        }
        // Each call's reply ends a turn of this connection's loop.
        #expect(turns.onLoopThread.load(ordering: .relaxed) >= before + 3)
        #expect(turns.elsewhere.load(ordering: .relaxed) == 0)
    }

    @Test func theHookBelongsToItsConnectionAndGoesWithIt() async throws {
        let mine = Turns()
        let released = Flag()
        let bus = try TestBus()
        var connection: Connection? = try await { [mine] () async throws -> Connection in
            let sentinel = Sentinel(released)
            return try await Connection.connect(
                to: .address(bus.daemon.address),
                configuration: Connection.Configuration(endOfTurn: { withExtendedLifetime(sentinel) { mine.count() } }))
        }()
        // Another connection's turns do not run it.
        let other = try await bus.connect()
        let before = mine.onLoopThread.load(ordering: .relaxed)
        _ = try await other.call(destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "GetId")
        other.close()
        #expect(mine.onLoopThread.load(ordering: .relaxed) == before)
        // Once the connection is closed (its loop joined) it runs no more,
        // and it goes with the connection.
        connection?.close()
        let afterClose = mine.onLoopThread.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(50))
        #expect(mine.onLoopThread.load(ordering: .relaxed) == afterClose)
        #expect(!released.value, "kept in the configuration, for a replacement")
        connection = nil
        #expect(released.value)
    }
}
