import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// `Connection.atEndOfEachTurn`: work a loop thread does once per turn.
@Suite struct TurnObserverTests {
    final class Turns: Sendable {
        /// The observer stays for the rest of the test run: it counts only
        /// while this test runs.
        let counting = Atomic(true)
        let onLoopThread = Atomic(0)
        let elsewhere = Atomic(0)
    }

    @Test func theObserverRunsOnTheLoopThreadAfterEachTurn() async throws {
        let turns = Turns()
        Connection.atEndOfEachTurn {
            guard turns.counting.load(ordering: .relaxed) else { return }
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            if name.hasPrefix("dbus-loop") {
                turns.onLoopThread.add(1, ordering: .relaxed)
            } else {
                turns.elsewhere.add(1, ordering: .relaxed)
            }
        }
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer {
            turns.counting.store(false, ordering: .relaxed)
            connection.close()
        }
        let before = turns.onLoopThread.load(ordering: .relaxed)
        for _ in 0..<3 {
            _ = try await connection.call(
                destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "GetId")
        }
        // Each call's reply ends a turn of this connection's loop.
        #expect(turns.onLoopThread.load(ordering: .relaxed) >= before + 3)
        #expect(turns.elsewhere.load(ordering: .relaxed) == 0)
    }
}
