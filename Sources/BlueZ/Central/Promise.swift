import Synchronization

/// A result that one side resolves and another awaits, once; later
/// resolutions are ignored. Resolving never blocks, so it can be done while
/// holding the central's lock.
final class Promise<Value: Sendable>: Sendable {
    private enum State {
        case pending(CheckedContinuation<Result<Value, BlueZError>, Never>?)
        case resolved(Result<Value, BlueZError>)
    }

    private let state = Mutex(State.pending(nil))

    /// Resolves the promise; returns false if it already was.
    @discardableResult
    func resolve(_ result: Result<Value, BlueZError>) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<Result<Value, BlueZError>, Never>?? in
            guard case .pending(let continuation) = state else { return nil }
            state = .resolved(result)
            return .some(continuation)
        }
        guard let continuation else { return false }
        continuation?.resume(returning: result)
        return true
    }

    /// Waits for the result. At `deadline` the promise resolves with
    /// `timeout`; a cancelled task resolves it with `.cancelled`.
    func wait(deadline: ContinuousClock.Instant?, timeout: BlueZError) async -> Result<Value, BlueZError> {
        var timer: Task<Void, Never>?
        if let deadline {
            timer = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                guard !Task.isCancelled else { return }
                self?.resolve(.failure(timeout))
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, BlueZError>, Never>) in
                let done = state.withLock { state -> Result<Value, BlueZError>? in
                    switch state {
                    case .resolved(let result): return result
                    case .pending:
                        state = .pending(continuation)
                        return nil
                    }
                }
                if let done { continuation.resume(returning: done) }
            }
        } onCancel: {
            resolve(.failure(BlueZError(.cancelled, "the operation was cancelled")))
        }
    }
}
