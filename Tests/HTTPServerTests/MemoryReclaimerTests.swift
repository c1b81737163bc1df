@testable import HTTPServer
import Synchronization
import Testing

extension HTTPServerTests {
    /// When memory is given back after connections close, without a socket
    /// (the trim is counted instead of run).
    @Suite struct MemoryReclaimerScheduling {
        final class Trims: Sendable {
            private let count = Atomic<Int>(0)
            func add() { count.add(1, ordering: .relaxed) }
            var value: Int { count.load(ordering: .relaxed) }

            /// Waits (up to 10 s) until at least `expected` trims ran; the count then.
            func reach(_ expected: Int) async throws -> Int {
                let deadline = ContinuousClock.now + .seconds(10)
                while value < expected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
                return value
            }
        }

        /// A drop to half the peak trims once soon and once more later; a
        /// further drop while those are due adds none; a new wave, after
        /// them, trims again.
        @Test func aWaveOfClosedConnectionsIsTrimmedTwice() async throws {
            let trims = Trims()
            let reclaimer = MemoryReclaimer(delays: [.milliseconds(10), .seconds(3)]) { trims.add() }
            reclaimer.connectionsChanged(open: 1000)
            reclaimer.connectionsChanged(open: 600)
            try await Task.sleep(for: .milliseconds(100))
            #expect(trims.value == 0, "above half the peak: no trim")
            reclaimer.connectionsChanged(open: 400)
            reclaimer.connectionsChanged(open: 0)
            #expect(try await trims.reach(1) == 1, "the first trim, well before the second")
            #expect(try await trims.reach(2) == 2)
            // Fewer than `minimumDrop` closing is not worth a trim.
            reclaimer.connectionsChanged(open: 10)
            reclaimer.connectionsChanged(open: 0)
            try await Task.sleep(for: .milliseconds(300))
            #expect(trims.value == 2)
            reclaimer.connectionsChanged(open: 500)
            reclaimer.connectionsChanged(open: 100)
            #expect(try await trims.reach(4) == 4)
        }
    }
}
