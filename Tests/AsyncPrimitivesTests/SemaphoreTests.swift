import AsyncPrimitives
import Synchronization
import Testing
import TestSupport

@Suite struct SemaphoreTests {
    @Test func manyConcurrentWaitersNeverExceedTheSlots() async throws {
        let semaphore = AsyncSemaphore(slots: 3)
        let running = Counter()
        let maximum = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<500 {
                group.addTask {
                    try await semaphore.acquire()
                    let now = running.value.add(1, ordering: .relaxed).newValue
                    _ = maximum.value.max(now, ordering: .relaxed)
                    await Task.yield()
                    running.value.subtract(1, ordering: .relaxed)
                    semaphore.release()
                }
            }
            try await group.waitForAll()
        }
        #expect(maximum.value.load(ordering: .relaxed) <= 3)
        #expect(semaphore.available == 3)
    }

    @Test func aCancelledTaskTakesNoFreeSlot() async throws {
        let semaphore = AsyncSemaphore(slots: 1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await semaphore.acquire()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(semaphore.available == 1)
    }

    @Test func aCancelledWaiterGivesUpItsTurn() async throws {
        let semaphore = AsyncSemaphore(slots: 1)
        try await semaphore.acquire()
        let first = Task { try await semaphore.acquire() }
        #expect(await eventually { semaphore.waiting == 1 })
        let second = Task { try await semaphore.acquire() }
        #expect(await eventually { semaphore.waiting == 2 })
        // The first leaves; the released slot goes to the second.
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        semaphore.release()
        try await second.value
        #expect(semaphore.available == 0)
        semaphore.release()
        #expect(semaphore.available == 1)
    }
}
