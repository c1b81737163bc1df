import Glibc

/// A mutex whose waiters sleep at once instead of spinning first, with the
/// interface of `Synchronization.Mutex` (`withLock`).
///
/// `Mutex` spins a thousand rounds before it sleeps, which pays off only when
/// the holder runs on another core. For a lock that two busy threads take
/// on a machine with fewer free cores than threads (one core, or a process
/// pinned to one), a waiter spins while the holder cannot run. glibc's
/// default mutex sleeps on the futex straight away. The HTTP server's
/// stream locks are such locks: taken by its polling thread and by the
/// thread that writes each value, on machines as small as a Raspberry Pi.
// @unchecked Sendable: `state` is read and written only between
// pthread_mutex_lock and pthread_mutex_unlock of `mutex`, and `State` is
// Sendable, so what leaves the lock is safe to hand to another thread.
public final class SleepingMutex<State: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var state: State

    public init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
