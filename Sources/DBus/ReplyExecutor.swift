import Dispatch
import Glibc

/// A task executor for work that waits on a D-Bus reply and has little to
/// do after it: a task that prefers it (`Task(executorPreference:)`) and is
/// resumed on a connection's loop thread (a reply, or a signal handler,
/// resumed it) goes on running on that thread, right after the loop's
/// current step, instead of waking a thread of the global pool. Resumed on
/// any other thread, it runs on the global dispatch queue, as a task
/// without a preference would.
///
/// What the task does on the loop thread holds up all traffic on that
/// connection until its next suspension: prefer this executor only for
/// short tails (a REST read encodes a small JSON value and hands it to the
/// HTTP server) and never for work that may block or wait synchronously on
/// the connection. Tasks that do not prefer it are never run on the loop
/// thread, however they are resumed: a continuation resumed by a reply
/// runs inline only when its task asked for it.
public final class ReplyExecutor: TaskExecutor {
    /// The one instance: a task may be resumed by any connection's loop.
    public static let shared = ReplyExecutor()

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let ready = ReadyJobs.current {
            ready.append(job)
            return
        }
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
}
