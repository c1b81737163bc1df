/// Limits how many tasks hold a slot at once. Waiters are served first
/// come, first served; a cancelled waiter leaves the queue; a released slot
/// goes straight to the oldest waiter.
public final class AsyncSemaphore: Sendable {
    private let queue: WaitQueue<Int, Void, Void>

    /// A semaphore with `slots` free slots (at least one).
    public init(slots: Int) {
        queue = WaitQueue(max(1, slots))
    }

    /// Takes a slot, waiting for one if none is free. Throws
    /// `CancellationError` if the task is cancelled before it gets one, and
    /// `WaitTimeout` at `deadline` (nil: no limit).
    public func acquire(deadline: ContinuousClock.Instant? = nil) async throws {
        try await queue.wait(tag: (), deadline: deadline) { available, _ in
            guard available > 0 else { return nil }
            available -= 1
            return ()
        }
    }

    /// Gives a slot back: to the oldest waiter if there is one.
    public func release() {
        queue.withLock { available, waiters in
            if let next = waiters.first {
                waiters.resume(next.id, returning: ())
            } else {
                available += 1
            }
        }
    }

    /// Free slots now (for tests and statistics).
    public var available: Int { queue.withLock { available, _ in available } }

    /// Tasks waiting for a slot now (for tests and statistics).
    public var waiting: Int { queue.withLock { _, waiters in waiters.count } }
}
