import AsyncPrimitives
import Synchronization
import Testing
import TestSupport

/// A queue whose owner decides by hand: nothing is admitted at once.
private func manualQueue(reconsidered: Counter? = nil) -> WaitQueue<Void, Int, String> {
    WaitQueue(()) { _, _, _ in _ = reconsidered?.value.add(1, ordering: .relaxed) }
}

/// An owner that never admits at once.
private func never(_: inout Void, _: inout Waiters<Int, String>) -> String? { nil }



private func waiting(_ queue: WaitQueue<Void, Int, String>) -> Int {
    queue.withLock { _, waiters in waiters.count }
}

@Suite struct WaitQueueTests {
    @Test func aTaskCancelledBeforeJoiningIsNeitherAdmittedNorQueued() async throws {
        let queue = WaitQueue<Int, Int, String>(1)
        let admissions = Atomic(0)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.wait(tag: 0) { _, _ in
                admissions.add(1, ordering: .relaxed)
                return "admitted"
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(admissions.load(ordering: .relaxed) == 0)
        #expect(queue.withLock { _, waiters in waiters.count } == 0)
    }

    @Test func aTaskCancelledWhileWaitingLeavesTheQueue() async throws {
        let reconsidered = Counter()
        let queue = manualQueue(reconsidered: reconsidered)
        let task = Task { try await queue.wait(tag: 1, admit: never) }
        #expect(await eventually { waiting(queue) == 1 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(waiting(queue) == 0)
        #expect(reconsidered.value.load(ordering: .relaxed) == 1)
    }

    @Test func aTaskCancelledAfterBeingResumedKeepsWhatItWasGiven() async throws {
        let reconsidered = Counter()
        let queue = manualQueue(reconsidered: reconsidered)
        let task = Task { try await queue.wait(tag: 1, admit: never) }
        #expect(await eventually { waiting(queue) == 1 })
        let resumed = queue.withLock { _, waiters in waiters.first.map { waiters.resume($0.id, returning: "granted") } }
        task.cancel()
        #expect(resumed == true)
        #expect(try await task.value == "granted")
        // The cancellation found nothing to abandon.
        #expect(reconsidered.value.load(ordering: .relaxed) == 0)
    }

    @Test func aWaiterLeavesAtItsDeadlineWithTheGivenError() async throws {
        struct Late: Error {}
        let queue = manualQueue()
        await #expect(throws: Late.self) {
            try await queue.wait(tag: 1, deadline: .now + .milliseconds(20), timeout: { Late() }, admit: never)
        }
        #expect(waiting(queue) == 0)
    }

    @Test func waitersAreServedInArrivalOrder() async throws {
        let queue = manualQueue()
        var tasks: [Task<String, any Error>] = []
        for index in 0..<20 {
            tasks.append(Task { try await queue.wait(tag: index, admit: never) })
            // Queued one after the other, so arrival order is known.
            #expect(await eventually { waiting(queue) == index + 1 })
        }
        var served: [Int] = []
        while let next = queue.withLock({ _, waiters in waiters.first }) {
            served.append(next.tag)
            queue.withLock { _, waiters in _ = waiters.resume(next.id, returning: "\(next.tag)") }
        }
        #expect(served == Array(0..<20))
        for (index, task) in tasks.enumerated() { #expect(try await task.value == "\(index)") }
    }

    /// Owner, cancellation and deadline race for every waiter: each one is
    /// resumed exactly once (a second resumption of a checked continuation
    /// would trap) and none is left behind.
    @Test func everyWaiterIsResumedExactlyOnceWhateverRaces() async throws {
        let queue = manualQueue()
        let outcomes = Outcomes()
        let count = 300
        await withTaskGroup(of: Void.self) { group in
            let tasks = (0..<count).map { index in
                let deadline: ContinuousClock.Instant? = index % 3 == 0 ? .now + .milliseconds(5) : nil
                return Task { try await queue.wait(tag: index, deadline: deadline, admit: never) }
            }
            for task in tasks {
                group.addTask {
                    let outcome: String
                    do {
                        outcome = try await task.value
                    } catch is CancellationError {
                        outcome = "cancelled"
                    } catch {
                        outcome = "timed out"
                    }
                    outcomes.counts.withLock { $0[outcome, default: 0] += 1 }
                }
            }
            group.addTask {
                for (index, task) in tasks.enumerated() where index % 2 == 0 { task.cancel() }
            }
            group.addTask {
                while outcomes.counts.withLock({ $0.values.reduce(0, +) }) < count {
                    queue.withLock { _, waiters in
                        for waiter in waiters.queued { waiters.resume(waiter.id, returning: "resumed") }
                    }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
        }
        #expect(outcomes.counts.withLock { $0.values.reduce(0, +) } == count)
        #expect(waiting(queue) == 0)
    }
}

private final class Outcomes: Sendable {
    let counts = Mutex<[String: Int]>([:])
}
