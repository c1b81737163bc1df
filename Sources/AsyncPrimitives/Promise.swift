/// A result that one side resolves and others await; the first
/// resolution wins and later ones are ignored. Resolving never blocks, so
/// it can be done while holding another lock.
public final class Promise<Value: Sendable, Failure: Error>: Sendable {
    private let queue = WaitQueue<Result<Value, Failure>?, Void, Result<Value, Failure>>(nil)

    public init() {}

    /// Resolves the promise and wakes every waiter; returns false if it was
    /// already resolved.
    @discardableResult
    public func resolve(_ result: Result<Value, Failure>) -> Bool {
        queue.withLock { state, waiters in
            guard state == nil else { return false }
            state = result
            waiters.resumeAll(where: { _ in true }, with: .success(result))
            return true
        }
    }

    /// The result, if the promise is resolved.
    public var result: Result<Value, Failure>? { queue.withLock { state, _ in state } }

    /// Waits for the result. At `deadline` the promise resolves with
    /// `timeout`; a cancelled task resolves it with `cancelled`. Either way
    /// the result returned is the promise's (the first resolution).
    public func wait(deadline: ContinuousClock.Instant?, timeout: Failure, cancelled: Failure) async
        -> Result<Value, Failure>
    {
        do {
            return try await queue.wait(tag: (), deadline: deadline, timeout: { PromiseTimeout() }) { result, _ in
                result
            }
        } catch is PromiseTimeout {
            resolve(.failure(timeout))
        } catch {
            resolve(.failure(cancelled))
        }
        return result ?? .failure(cancelled)
    }
}

private struct PromiseTimeout: Error {}
