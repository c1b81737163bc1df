#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Store {
    /// Appends an event to the log and returns its id, without waiting for
    /// the disk: the event is queued and committed with its batch, within
    /// `StoreOptions.batchInterval` (or at once if the batch is full or
    /// someone waits for a commit). Safe to call from any thread, and cheap
    /// (a lock and an array append), so the notification path can call it
    /// for every value.
    ///
    /// Ids are handed out in call order and increase across restarts. If
    /// the queue is full or the store is closed, the id is still handed out
    /// but the event is not stored (`waitUntilCommitted` then throws, and
    /// `statistics.lost` counts it).
    @discardableResult
    public func append(
        type: String, device: String? = nil, data: [UInt8], timestamp: Date = Date()
    ) -> UInt64 {
        worker.append(type: type, device: device, data: .bytes(data), timestamp: timestamp)
    }

    /// Appends an event whose JSON is made by `data` on the store's thread,
    /// when its batch is committed: the producer pays only for queueing,
    /// not for encoding. `data` must not block, and must give the same bytes
    /// a stream would send for the event.
    @discardableResult
    public func append(
        type: String, device: String? = nil, timestamp: Date = Date(),
        data: @escaping @Sendable () -> [UInt8]
    ) -> UInt64 {
        worker.append(type: type, device: device, data: .deferred(data), timestamp: timestamp)
    }

    /// Hands out the next id without storing an event (for an event sent to
    /// one stream only), so that ids stay unique across the gateway. It is
    /// made durable with the next batch.
    public func reserveEventID() -> UInt64 { worker.reserveID() }

    /// The id the next appended (or reserved) event gets. Just after
    /// `open`, one more than the newest id the store ever handed out and
    /// committed.
    public var nextEventID: UInt64 { worker.state.withLock { $0.nextID } }

    /// Returns once the event `id` (and every event before it) is
    /// committed; throws the reason if it was not stored. Waiting makes the
    /// writer commit at once instead of at the end of its batch interval.
    public func waitUntilCommitted(_ id: UInt64) async throws(StoreError) {
        try await worker.waitUntilCommitted(id)
    }

    /// Waits until every event appended so far is committed.
    public func flush() async throws(StoreError) {
        let last = worker.state.withLock { $0.nextID } - 1
        guard last > 0 else { return }
        try await worker.waitUntilCommitted(last)
    }

    /// Up to `limit` committed events with ids above `id`, oldest first: a
    /// page of the log. The next page starts after the last event returned;
    /// a page shorter than `limit` is the last one (for now).
    public func events(after id: UInt64, limit: Int = 1_000) async throws(StoreError) -> [StoredEvent] {
        let limit = max(0, limit)
        return try await worker.perform(transaction: false) { (database) throws(SQLiteError) in
            try database.prepare(
                "SELECT id, type, device, data, timestamp_us FROM events WHERE id > ? ORDER BY id LIMIT ?"
            ).bind(.integer(Int64(clamping: id)), .integer(Int64(limit))).rows { row in
                StoredEvent(
                    id: UInt64(row.integer(0)), type: row.text(1), device: row.optionalText(2), data: row.blob(3),
                    timestamp: Date(storedMicroseconds: row.integer(4)))
            }
        }
    }

    /// The ranges of ids that were handed out but whose events were never
    /// stored (the disk was full or stuck, the gateway stopped before their
    /// commit, before this run or during it), oldest first: those that end
    /// after `id` and start at or before `through`. Ids reserved for one
    /// stream's events (`reserveEventID`) are not among them.
    public func missingEvents(after id: UInt64, through: UInt64) async throws(StoreError) -> [ClosedRange<UInt64>] {
        let pending = worker.state.withLock { $0.unrecordedGaps }
        let stored = try await worker.perform(transaction: false) { (database) throws(SQLiteError) in
            try database.prepare("SELECT first, last FROM event_gaps WHERE last > ? AND first <= ? ORDER BY first")
                .bind(.integer(Int64(clamping: id)), .integer(Int64(clamping: through))).rows { row in
                    UInt64(row.integer(0))...UInt64(row.integer(1))
                }
        }
        let recent = pending.filter { $0.upperBound > id && $0.lowerBound <= through }
        return (stored + recent).sorted { $0.lowerBound < $1.lowerBound }
    }

    /// How many events are stored and their id range (committed events).
    public var eventLogSummary: EventLogSummary { worker.state.withLock { $0.summary } }

    /// The event writer's counters since `open`.
    public var statistics: EventLogStatistics { worker.state.withLock { $0.statistics } }
}
