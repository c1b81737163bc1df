import Glibc

/// The jobs a loop thread runs for `ReplyExecutor` at the end of its current
/// step, in the order they became ready.
///
/// Reached only through the thread-specific slot of the loop thread that
/// owns it (`current`), so only that thread touches it.
final class ReadyJobs {
    private var jobs: [UnownedJob] = []

    /// The calling thread's list: set while a loop thread runs its loop.
    static var current: ReadyJobs? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<ReadyJobs>.fromOpaque(raw).takeUnretainedValue()
    }

    /// One slot per thread for the pointer; created once per process.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// Makes this the calling thread's list until `unbind`. The thread
    /// holds it unretained: its owner keeps it alive until after `unbind`.
    func bind() {
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Runs what is left, then detaches the list from the thread: later
    /// jobs go to the global queue.
    func unbind() {
        runAll()
        pthread_setspecific(Self.key, nil)
    }

    func append(_ job: UnownedJob) {
        jobs.append(job)
    }

    /// Runs the ready jobs, and those they make ready, until none is left.
    func runAll() {
        while !jobs.isEmpty {
            let executor = ReplyExecutor.shared.asUnownedTaskExecutor()
            for job in jobs.swapAndClear() {
                job.runSynchronously(on: executor)
            }
        }
    }
}
