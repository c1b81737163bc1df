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
        let id: WaiterID
        let tag: Tag
        let continuation: CheckedContinuation<Value, any Error>
    }

    struct Resumption {
        let continuation: CheckedContinuation<Value, any Error>
        let result: Result<Value, any Error>
        func run() { continuation.resume(with: result) }
    }

    private var entries = Deque<Entry>()
    private var resumptions: [Resumption] = []
    private var nextID: UInt64 = 0

    init() {}

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// The waiters, oldest first.
    public var queued: [(id: WaiterID, tag: Tag)] { entries.map { ($0.id, $0.tag) } }

    /// Whether a waiter's tag satisfies `matching`.
    public func contains(where matching: (Tag) -> Bool) -> Bool {
        entries.contains { matching($0.tag) }
    }

    /// How many waiters' tags satisfy `matching`.
    public func count(where matching: (Tag) -> Bool) -> Int {
        entries.reduce(0) { $0 + (matching($1.tag) ? 1 : 0) }
    }

    /// The oldest waiter.
    public var first: (id: WaiterID, tag: Tag)? { entries.first.map { ($0.id, $0.tag) } }

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
        var kept = Deque<Entry>()
        for entry in entries {
            if matching(entry.tag) {
                resumptions.append(Resumption(continuation: entry.continuation, result: result))
            } else {
                kept.append(entry)
            }
        }
        entries = kept
    }

    mutating func resume(_ id: WaiterID, with result: Result<Value, any Error>) -> Bool {
        // The oldest is the usual one: a queue is served from its head.
        let index: Int?
        if entries.first?.id == id {
            index = entries.startIndex
        } else {
            index = entries.firstIndex { $0.id == id }
        }
        guard let index else { return false }
        let entry = entries.remove(at: index)
        resumptions.append(Resumption(continuation: entry.continuation, result: result))
        return true
    }

    mutating func makeID() -> WaiterID {
        defer { nextID += 1 }
        return WaiterID(rawValue: nextID)
    }

    mutating func append(id: WaiterID, tag: Tag, continuation: CheckedContinuation<Value, any Error>) {
        entries.append(Entry(id: id, tag: tag, continuation: continuation))
    }

    mutating func takeResumptions() -> [Resumption] {
        guard !resumptions.isEmpty else { return [] }
        defer { resumptions = [] }
        return resumptions
    }
}
