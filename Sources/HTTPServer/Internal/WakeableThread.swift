import CMicroHTTPD
import Glibc
import Synchronization

/// A helper thread that sleeps in poll(2) with an eventfd among its
/// descriptors, so that other threads can wake it: started by the first
/// caller that needs it, woken by any, stopped and joined once.
///
/// Its body loops until `isStopped`, polling `wakeFD` (and whatever else it
/// watches) and calling `drainWakeups()` when `wakeFD` is readable.
final class WakeableThread: Sendable {
    private enum Phase {
        case idle
        /// Claimed by a caller that is creating the thread, so that a second
        /// caller does not start another.
        case starting
        case running(pthread_t)
        case stopped
    }

    /// The descriptor to poll for `POLLIN`; -1 if no eventfd could be made
    /// (then the thread never starts).
    let wakeFD: Int32
    private let phase = Mutex(Phase.idle)

    init() {
        wakeFD = cmhd_eventfd()
    }

    deinit {
        if wakeFD >= 0 { close(wakeFD) }
    }

    /// Whether `stop()` was called: the body returns when it sees this.
    var isStopped: Bool {
        phase.withLock { if case .stopped = $0 { true } else { false } }
    }

    /// Starts a thread running `body` unless one was started (or stopped)
    /// before; wakes the running one otherwise. `body` keeps what it
    /// captures alive until it returns.
    func startOrWake(_ body: @escaping @Sendable () -> Void) {
        guard wakeFD >= 0 else { return }
        let start = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .starting
            return true
        }
        guard start else { return wake() }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context) == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            phase.withLock { phase in if case .starting = phase { phase = .idle } }
            return
        }
        let stoppedMeanwhile = phase.withLock { phase -> Bool in
            guard case .starting = phase else { return true }
            phase = .running(thread)
            return false
        }
        // `stop()` came while the thread was being created: it could not
        // join a thread it did not know, so the starter does.
        if stoppedMeanwhile {
            wake()
            pthread_join(thread, nil)
        }
    }

    /// Makes the thread's poll return.
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Empties the eventfd after a wake-up, so the next poll sleeps.
    func drainWakeups() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, 8)
    }

    /// Stops the thread and waits for it to end; later starts do nothing.
    func stop() {
        let running = phase.withLock { phase -> pthread_t? in
            defer { phase = .stopped }
            if case .running(let thread) = phase { return thread }
            return nil
        }
        wake()
        if let running { pthread_join(running, nil) }
    }

    /// The body, boxed for pthread_create's context pointer.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
