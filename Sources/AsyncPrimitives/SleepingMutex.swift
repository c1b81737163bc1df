import Glibc

/// A mutex whose waiters sleep at once instead of spinning first, with the
/// interface of `Synchronization.Mutex` (`withLock`).
///
/// `Mutex` spins a thousand rounds before it sleeps, which pays off only when
/// the holder runs on another core. The gateway's hot locks are taken by two
/// threads that often share one core (a Raspberry Pi's, or the core the
/// gateway is pinned to): libmicrohttpd's polling thread and the D-Bus
/// thread meet at every stream write and connection resume. There a waiter
/// spins while the holder cannot run, and the spinning was more than a
/// quarter of the gateway's CPU at 20,000 notifications/s (perf, `make
/// bench`). glibc's default mutex sleeps on the futex straight away.
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
