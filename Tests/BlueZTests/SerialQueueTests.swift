import Synchronization
import Testing

@testable import BlueZ

@Suite struct SerialQueueTests {
    @Test func operationsOfOneKeyNeverOverlapAndRunInOrder() async throws {
        let queue = OperationLanes<Int>()
        let probe = Probe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await queue.run(1, deadline: .now + .seconds(30)) {
                        let now = probe.running.add(1, ordering: .relaxed).newValue
                        _ = probe.maximum.max(now, ordering: .relaxed)
                        probe.order.withLock { $0.append(index) }
                        try await Task.sleep(for: .milliseconds(2))
                        probe.running.subtract(1, ordering: .relaxed)
                    }
                }
                // Submitted one after the other, so arrival order is known.
                try await Task.sleep(for: .milliseconds(5))
            }
            try await group.waitForAll()
        }
        #expect(probe.maximum.load(ordering: .relaxed) == 1)
        #expect(probe.order.withLock { $0 } == Array(0..<20))
    }

    @Test func waitingEndsAtTheDeadline() async throws {
        let queue = OperationLanes<Int>()
        let (release, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await queue.run(1, deadline: .now + .seconds(30)) { for await _ in release { break } } }
        try await Task.sleep(for: .milliseconds(20))
        await #expect {
            try await queue.run(1, deadline: .now + .milliseconds(50)) {}
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        hold.yield()
        try await holder.value
        // The lane is free again.
        try await queue.run(1, deadline: .now + .seconds(1)) {}
    }

    @Test func aCancelledWaiterLeavesTheLine() async throws {
        let queue = OperationLanes<Int>()
        let (release, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await queue.run(1, deadline: .now + .seconds(30)) { for await _ in release { break } } }
        try await Task.sleep(for: .milliseconds(20))
        let waiter = Task { try await queue.run(1, deadline: .now + .seconds(30)) { "ran" } }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        hold.yield()
        try await holder.value
        #expect(try await queue.run(1, deadline: .now + .seconds(1)) { "next" } == "next")
    }

    @Test func aTaskCancelledBeforeItJoinsFailsAtOnce() async throws {
        let queue = OperationLanes<Int>()
        let (release, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await queue.run(1, deadline: .now + .seconds(30)) { for await _ in release { break } } }
        #expect(await waitUntil { queue.occupancy(1).running == 1 })
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.run(1, deadline: .now + .seconds(30)) { "ran" }
        }
        // Not at the holder's end, nor at the deadline.
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(queue.occupancy(1).waiting == 0)
        hold.yield()
        try await holder.value
    }

    @Test func differentKeysRunConcurrently() async throws {
        let queue = OperationLanes<Int>()
        let (release, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await queue.run(1, deadline: .now + .seconds(30)) { for await _ in release { break } } }
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await queue.run(2, deadline: .now + .seconds(5)) { 2 } == 2)
        hold.yield()
        try await holder.value
    }
}

private final class Probe: Sendable {
    let running = Atomic(0)
    let maximum = Atomic(0)
    let order = Mutex<[Int]>([])
}

/// Waits until `condition` holds (checking every millisecond, 20 s at most).
private func waitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
