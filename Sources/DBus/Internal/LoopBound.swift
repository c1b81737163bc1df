import Glibc
import Synchronization

/// The thread an event loop runs on, recorded by the thread itself when it
/// starts.
final class LoopThread: Sendable {
    /// `pthread_t` is an integer on Linux; 0 until the thread starts.
    private let id = Atomic<UInt>(0)

    /// Records the calling thread as the loop thread.
    func bind() {
        id.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// Whether the calling thread is the loop thread.
    var isCurrent: Bool {
        pthread_equal(pthread_self(), pthread_t(id.load(ordering: .relaxed))) != 0
    }
}

/// State only the loop thread may touch. Every access checks, at run time,
/// that it is made on that thread (swift-nio's `NIOLoopBound` rule), so an
/// owner's `@unchecked Sendable` claim that rests on "only the loop thread
/// touches it" is checked instead of trusted. The check costs a
/// `pthread_self()` and a comparison.
struct LoopBound<Value> {
    private var storage: Value
    private let thread: LoopThread

    /// `value`, bound to `thread` (which need not have started yet: the
    /// first access must come after it has).
    init(_ value: Value, thread: LoopThread) {
        storage = value
        self.thread = thread
    }

    var value: Value {
        _read {
            precondition(thread.isCurrent, "loop-thread state touched from another thread")
            yield storage
        }
        _modify {
            precondition(thread.isCurrent, "loop-thread state touched from another thread")
            yield &storage
        }
    }
}
