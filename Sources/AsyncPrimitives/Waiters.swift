import DequeModule

/// Identifies one waiter of a `WaitQueue`.
public struct WaiterID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The tasks waiting in a `WaitQueue`, in arrival order, as its owner sees
/// them under the lock. Resuming a waiter removes it; the resumption itself
/// happens after the lock is released.
public struct Waiters<Tag: Sendable, Value: Sendable>: ~Copyable {
    struct Entry {
        let tag: Tag
        let continuation: CheckedContinuation<Value, any Error>
    }

    struct Resumption {
        let continuation: CheckedContinuation<Value, any Error>
        let result: Result<Value, any Error>
        func run() { continuation.resume(with: result) }
    }

    /// The waiters by id, and their ids in arrival order. A waiter that
    /// leaves is removed from `entries` at once and from `order` lazily
    /// (at the head at once, elsewhere when the dead ids outnumber the
    /// live), so that removing any waiter costs O(1), amortised.
    private var entries: [WaiterID: Entry] = [:]
    private var order = Deque<WaiterID>()
    private var resumptions: [Resumption] = []
    private var nextID: UInt64 = 0

    init() {}

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// The waiters, oldest first.
    public var queued: [(id: WaiterID, tag: Tag)] {
        order.compactMap { id in entries[id].map { (id, $0.tag) } }
    }

    /// Whether a waiter's tag satisfies `matching`.
    public func contains(where matching: (Tag) -> Bool) -> Bool {
        entries.values.contains { matching($0.tag) }
    }

    /// How many waiters' tags satisfy `matching`.
    public func count(where matching: (Tag) -> Bool) -> Int {
        entries.values.reduce(0) { $0 + (matching($1.tag) ? 1 : 0) }
    }

    /// The oldest waiter.
    public var first: (id: WaiterID, tag: Tag)? {
        // The head is live: removals drop dead ids from the head.
        order.first.flatMap { id in entries[id].map { (id, $0.tag) } }
    }

    /// Resumes waiter `id` with `value`; returns false if it is no longer
    /// waiting (already resumed, cancelled or timed out).
    @discardableResult
    public mutating func resume(_ id: WaiterID, returning value: Value) -> Bool {
        resume(id, with: .success(value))
    }

    /// Fails waiter `id` with `error`; returns false if it is no longer
    /// waiting.
    @discardableResult
    public mutating func resume(_ id: WaiterID, throwing error: any Error) -> Bool {
        resume(id, with: .failure(error))
    }

    /// Resumes every waiter whose tag satisfies `matching`, oldest first.
    public mutating func resumeAll(where matching: (Tag) -> Bool, with result: Result<Value, any Error>) {
        for id in order {
            guard let entry = entries[id], matching(entry.tag) else { continue }
            entries[id] = nil
            resumptions.append(Resumption(continuation: entry.continuation, result: result))
        }
        tidyOrder()
    }

    mutating func resume(_ id: WaiterID, with result: Result<Value, any Error>) -> Bool {
        guard let entry = entries.removeValue(forKey: id) else { return false }
        resumptions.append(Resumption(continuation: entry.continuation, result: result))
        tidyOrder()
        return true
    }

    /// Drops dead ids from the head, and rebuilds `order` once dead ids
    /// outnumber live ones (each rebuild is paid for by as many removals).
    private mutating func tidyOrder() {
        while let head = order.first, entries[head] == nil { order.removeFirst() }
        if order.count > 2 * entries.count + 16 {
            order = Deque(order.filter { entries[$0] != nil })
        }
    }

    mutating func makeID() -> WaiterID {
        defer { nextID += 1 }
        return WaiterID(rawValue: nextID)
    }

    mutating func append(id: WaiterID, tag: Tag, continuation: CheckedContinuation<Value, any Error>) {
        entries[id] = Entry(tag: tag, continuation: continuation)
        order.append(id)
    }

    mutating func takeResumptions() -> [Resumption] {
        guard !resumptions.isEmpty else { return [] }
        defer { resumptions = [] }
        return resumptions
    }
}
