/// What an operation needs while it runs: a key, shared or alone.
public struct LaneClaim<Key: Hashable & Sendable>: Hashable, Sendable {
    public var key: Key
    /// Whether no other operation may hold `key` meanwhile.
    public var exclusive: Bool

    public init(_ key: Key, exclusive: Bool) {
        self.key = key
        self.exclusive = exclusive
    }

    /// `key`, held alone.
    public static func exclusive(_ key: Key) -> LaneClaim { LaneClaim(key, exclusive: true) }
    /// `key`, held alongside other shared holders.
    public static func shared(_ key: Key) -> LaneClaim { LaneClaim(key, exclusive: false) }

    /// Two claims conflict when they name one key and either wants it alone.
    func conflicts(with other: LaneClaim) -> Bool {
        key == other.key && (exclusive || other.exclusive)
    }
}

/// Runs operations that each claim a few keys, shared or exclusive (a
/// readers-writer lock per key, taken all at once): an operation runs when
/// none of its claims conflicts with an operation running, or with one
/// that arrived before it and is still waiting. So operations that conflict
/// run one at a time in arrival order, operations that do not conflict run
/// side by side, and an exclusive claim is never starved by a stream of
/// shared ones.
public final class Lanes<Key: Hashable & Sendable>: Sendable {
    private let queue: WaitQueue<LaneTable<Key>, [LaneClaim<Key>], Void>

    public init() {
        queue = WaitQueue(LaneTable()) { table, waiters, left in
            for id in table.leave(left) { waiters.resume(id, returning: ()) }
        }
    }

    /// Runs `body` once `claims` are granted, and releases them after it.
    /// Waiting ends with `timeout()` at `deadline`, and with
    /// `CancellationError` when the task is cancelled (also when it already
    /// was on arrival: a cancelled task never takes a lane).
    @discardableResult
    public func run<T: Sendable>(
        _ claims: [LaneClaim<Key>], deadline: ContinuousClock.Instant,
        timeout: @escaping @Sendable () -> any Error = { WaitTimeout() },
        _ body: () async throws -> T
    ) async throws -> T {
        try await acquire(claims, deadline: deadline, timeout: timeout)
        defer { release(claims) }
        return try await body()
    }

    /// Runs `body` alone on `key`.
    @discardableResult
    public func run<T: Sendable>(
        _ key: Key, deadline: ContinuousClock.Instant,
        timeout: @escaping @Sendable () -> any Error = { WaitTimeout() },
        _ body: () async throws -> T
    ) async throws -> T {
        try await run([.exclusive(key)], deadline: deadline, timeout: timeout, body)
    }

    /// How many operations hold or wait for `key` (for tests).
    public func occupancy(_ key: Key) -> (running: Int, waiting: Int) {
        queue.withLock { table, _ in table.occupancy(key) }
    }

    private func acquire(
        _ claims: [LaneClaim<Key>], deadline: ContinuousClock.Instant, timeout: @escaping @Sendable () -> any Error
    ) async throws {
        try await queue.wait(
            tag: claims, deadline: deadline, timeout: timeout, queued: { table, id in table.enqueue(id, claims) }
        ) { table, _ -> Void? in
            table.takeAtOnce(claims) ? () : nil
        }
    }

    private func release(_ claims: [LaneClaim<Key>]) {
        queue.withLock { table, waiters in
            for id in table.release(claims) { waiters.resume(id, returning: ()) }
        }
    }
}
