import AsyncPrimitives
import Synchronization

/// How many MQTT commands run at once, and how many may wait for a turn.
/// A command is let in or refused at once, on the MQTT thread, before any
/// task is made for it: a burst of any size costs one counter check per
/// command past the bound, never a task or a queued waiter.
final class CommandGate: Sendable {
    private let slots: AsyncSemaphore
    private let admitted = Mutex(0)
    private let capacity: Int

    init(concurrency: Int, queueLength: Int) {
        slots = AsyncSemaphore(slots: max(1, concurrency))
        capacity = max(1, concurrency) + max(0, queueLength)
    }

    /// Takes a place (running or waiting); false when none is left. Every
    /// place taken is given back by `run`.
    func enter() -> Bool {
        admitted.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
    }

    /// Runs `body` in its turn, after `enter()` returned true. Returns nil
    /// when the turn did not come by `deadline`.
    func run<T: Sendable>(deadline: ContinuousClock.Instant, _ body: () async -> T) async -> T? {
        defer { admitted.withLock { $0 -= 1 } }
        do {
            try await slots.acquire(deadline: deadline)
        } catch {
            return nil
        }
        defer { slots.release() }
        return await body()
    }

    /// Commands running or waiting now.
    var depth: Int { admitted.withLock { $0 } }
}
