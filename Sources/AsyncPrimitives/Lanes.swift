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
    private struct Held {
        var shared = 0
        var exclusive = false
    }

    private let queue: WaitQueue<[Key: Held], [LaneClaim<Key>], Void>

    public init() {
        queue = WaitQueue([:]) { held, waiters in Self.admitWaiting(&held, &waiters) }
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
        queue.withLock { held, waiters in
            let running = held[key].map { $0.exclusive ? 1 : $0.shared } ?? 0
            let waiting = waiters.count { $0.contains { $0.key == key } }
            return (running, waiting)
        }
    }

    private func acquire(
        _ claims: [LaneClaim<Key>], deadline: ContinuousClock.Instant, timeout: @escaping @Sendable () -> any Error
    ) async throws {
        try await queue.wait(tag: claims, deadline: deadline, timeout: timeout) { held, waiters -> Void? in
            // Everyone waiting came first: a conflict with any of them waits.
            guard Self.isFree(claims, in: held),
                !waiters.contains(where: { tag in
                    tag.contains { queued in claims.contains { $0.conflicts(with: queued) } }
                })
            else { return nil }
            Self.take(claims, in: &held)
            return ()
        }
    }

    private func release(_ claims: [LaneClaim<Key>]) {
        queue.withLock { held, waiters in
            for claim in claims {
                guard var entry = held[claim.key] else { continue }
                if claim.exclusive { entry.exclusive = false } else { entry.shared -= 1 }
                held[claim.key] = entry.exclusive || entry.shared > 0 ? entry : nil
            }
            Self.admitWaiting(&held, &waiters)
        }
    }

    /// Grants, oldest first, every waiter whose claims conflict neither
    /// with a holder nor with an older waiter that is still waiting.
    private static func admitWaiting(_ held: inout [Key: Held], _ waiters: inout Waiters<[LaneClaim<Key>], Void>) {
        var blocked: [LaneClaim<Key>] = []
        for waiter in waiters.queued {
            let free =
                isFree(waiter.tag, in: held)
                && !waiter.tag.contains { claim in blocked.contains { $0.conflicts(with: claim) } }
            if free {
                take(waiter.tag, in: &held)
                waiters.resume(waiter.id, returning: ())
            } else {
                blocked += waiter.tag
            }
        }
    }

    private static func isFree(_ claims: [LaneClaim<Key>], in held: [Key: Held]) -> Bool {
        claims.allSatisfy { claim in
            guard let entry = held[claim.key] else { return true }
            return !entry.exclusive && (!claim.exclusive || entry.shared == 0)
        }
    }

    private static func take(_ claims: [LaneClaim<Key>], in held: inout [Key: Held]) {
        for claim in claims {
            if claim.exclusive {
                held[claim.key, default: Held()].exclusive = true
            } else {
                held[claim.key, default: Held()].shared += 1
            }
        }
    }
}
