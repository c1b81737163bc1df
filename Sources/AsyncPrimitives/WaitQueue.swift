import Synchronization

/// A state guarded by a lock, and the tasks waiting for it to change, in
/// arrival order.
///
/// The one waiter queue of the package: the semaphore, the lanes, promises
/// and single flights are written on it, so that the rules below are
/// written and tested once. Its guarantees:
/// - A task that is already cancelled when it calls `wait` is never
///   admitted and never queued: it throws `CancellationError` (the check is
///   made under the lock, so a cancellation that races with joining the
///   queue is seen by one side or the other).
/// - A waiting task leaves the queue when it is cancelled (with
///   `CancellationError`) or when its deadline passes (with the error given);
///   the owner is then asked to reconsider (see `init`), since a waiter that
///   left may have been holding others back.
/// - Every waiter is resumed exactly once, outside the lock: by the owner
///   (`resume` in `withLock`), by its cancellation, or by its deadline,
///   whichever removes it from the queue first. A waiter the owner resumed
///   keeps what it was given even if its task is cancelled a moment later.
public final class WaitQueue<State, Tag: Sendable, Value: Sendable>: Sendable {
    private let storage: Mutex<Storage>
    /// Called under the lock after a waiter (its id given) left without
    /// being resumed.
    private let reconsider: @Sendable (inout State, inout Waiters<Tag, Value>, WaiterID) -> Void

    private struct Storage: ~Copyable {
        var state: State
        var waiters: Waiters<Tag, Value>
    }

    /// A queue over `state`. `reconsider` runs under the lock after a
    /// waiter gave up (cancelled or timed out), with that waiter's id, so
    /// that the owner can admit waiters it held back.
    public init(
        _ state: sending State,
        reconsider: @escaping @Sendable (inout State, inout Waiters<Tag, Value>, WaiterID) -> Void = { _, _, _ in }
    ) {
        storage = Mutex(Storage(state: state, waiters: Waiters()))
        self.reconsider = reconsider
    }

    /// Runs `body` with the state and the waiters under the lock; waiters
    /// it resumes are resumed after the lock is released.
    public func withLock<Result: Sendable>(
        _ body: (inout State, inout Waiters<Tag, Value>) throws -> Result
    ) rethrows -> Result {
        var resumptions: [Waiters<Tag, Value>.Resumption] = []
        defer { for resumption in resumptions { resumption.run() } }
        return try storage.withLock { storage in
            defer { resumptions = storage.waiters.takeResumptions() }
            return try body(&storage.state, &storage.waiters)
        }
    }

    /// Waits until the owner resumes this task, unless `admit` (run under
    /// the lock, with the waiters queued so far) returns a value at once.
    /// When it returns nil the task is queued with `tag`, atomically with
    /// that decision. `admit` runs once more as the task is queued (the
    /// state may have changed since the first try).
    ///
    /// Throws `CancellationError` when the task is or becomes cancelled
    /// before it is resumed, and `timeout()` at `deadline`. `deadline` is
    /// read under the lock when the task is queued, after `admit` (nil: no
    /// limit; a task that is never queued costs no timer). `queued` runs
    /// under the lock as the task joins the queue, with its id (for an
    /// owner that indexes its waiters).
    public func wait(
        tag: Tag,
        deadline: @autoclosure () -> ContinuousClock.Instant? = nil,
        timeout: @escaping @Sendable () -> any Error = { WaitTimeout() },
        queued: (inout State, WaiterID) -> Void = { _, _ in },
        admit: (inout State, inout Waiters<Tag, Value>) throws -> Value?
    ) async throws -> Value {
        // Fast path: admitted at once costs one lock, no continuation.
        let first = try storage.withLock { storage -> FirstTry in
            if Task.isCancelled { throw CancellationError() }
            if let value = try admit(&storage.state, &storage.waiters) { return .admitted(value) }
            return .queueing(storage.waiters.makeID())
        }
        let id: WaiterID
        switch first {
        case .admitted(let value): return value
        case .queueing(let waiter): id = waiter
        }
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                var limit: ContinuousClock.Instant?
                let outcome = storage.withLock { storage -> Result<Value, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    do {
                        // The state may have changed since the fast path.
                        if let value = try admit(&storage.state, &storage.waiters) { return .success(value) }
                    } catch {
                        return .failure(error)
                    }
                    storage.waiters.append(id: id, tag: tag, continuation: continuation)
                    queued(&storage.state, id)
                    limit = deadline()
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else if let limit {
                    timer = Task { [weak self] in
                        try? await Task.sleep(until: limit, clock: .continuous)
                        guard !Task.isCancelled else { return }
                        self?.abandon(id, with: timeout())
                    }
                }
            }
        } onCancel: {
            abandon(id, with: CancellationError())
        }
    }

    private enum FirstTry {
        case admitted(Value)
        case queueing(WaiterID)
    }

    /// Removes waiter `id` if it is still queued and fails it with `error`.
    private func abandon(_ id: WaiterID, with error: any Error) {
        withLock { state, waiters in
            guard waiters.resume(id, throwing: error) else { return }
            reconsider(&state, &waiters, id)
        }
    }
}

/// The error a waiter gets at its deadline when no other was given.
public struct WaitTimeout: Error, Sendable {
    public init() {}
}
