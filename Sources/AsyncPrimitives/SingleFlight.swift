/// Runs one operation per key at a time and shares its result: a caller
/// that arrives while the operation for its key is under way waits for that
/// operation's result instead of starting another.
///
/// The operation runs in a task of its own, so a caller that is cancelled
/// (or whose deadline passes) stops waiting without cancelling it for the
/// others; it runs to its end even when every caller has left. It must end
/// by the deadline of the caller that started it: that caller waits for it
/// without a timer of its own, and so do later callers whose deadlines are
/// no earlier.
public final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The keys whose operation is under way, with the deadline it ends by.
    /// Every waiter tagged with one of them waits for that operation: a new
    /// one for the key starts only after the last one's waiters were
    /// resumed, under the same lock.
    private let queue = WaitQueue<[Key: ContinuousClock.Instant?], Key, Value>([:])

    public init() {}

    /// The result of the operation for `key`: the one under way if there is
    /// one, else `operation`, started now. Waiting ends with
    /// `CancellationError` when the task is cancelled, and with `timeout()`
    /// at `deadline`.
    public func run(
        _ key: Key, deadline: ContinuousClock.Instant? = nil,
        timeout: @escaping @Sendable () -> any Error = { WaitTimeout() },
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // `wait` tries at once, then again as it queues the caller; the
        // operation starts on the second try, so that its result cannot
        // come between the two and be missed.
        var queueing = false
        var limit: ContinuousClock.Instant?
        return try await queue.wait(tag: key, deadline: limit, timeout: timeout) { underWay, _ in
            defer { queueing = true }
            guard queueing else { return nil }
            if let ends = underWay[key] {
                // Joining: a timer only if this caller gives up earlier.
                if let mine = deadline, ends.map({ mine < $0 }) ?? true { limit = mine }
            } else {
                underWay[key] = .some(deadline)
                Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await operation()) } catch { result = .failure(error) }
                    self.complete(key, result)
                }
            }
            return nil
        }
    }

    /// How many callers wait for the operation under way for `key`.
    public func waiting(_ key: Key) -> Int {
        queue.withLock { _, waiters in waiters.count { $0 == key } }
    }

    private func complete(_ key: Key, _ result: Result<Value, any Error>) {
        queue.withLock { underWay, waiters in
            underWay[key] = nil
            waiters.resumeAll(where: { $0 == key }, with: result)
        }
    }
}
