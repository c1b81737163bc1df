#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One event of the event log.
public struct StoredEvent: Sendable, Hashable {
    /// The gateway-wide event id: increasing, across restarts too.
    public let id: UInt64
    /// The event type, such as `characteristic-value`.
    public let type: String
    /// The device the event is about, if any.
    public let device: String?
    /// The event's JSON, as the caller gave it.
    public let data: [UInt8]
    public let timestamp: Date

    public init(id: UInt64, type: String, device: String?, data: [UInt8], timestamp: Date) {
        self.id = id
        self.type = type
        self.device = device
        self.data = data
        self.timestamp = timestamp
    }
}

/// What the event log holds now (committed events only).
public struct EventLogSummary: Sendable, Hashable {
    /// How many events are stored.
    public let count: Int
    /// The oldest stored event's id, if any.
    public let oldestID: UInt64?
    /// The newest stored event's id, if any.
    public let newestID: UInt64?
}

/// Counters of the event log's writer since the store opened.
public struct EventLogStatistics: Sendable, Hashable {
    /// Events handed to `append`.
    public var appended: UInt64 = 0
    /// Events committed.
    public var committed: UInt64 = 0
    /// Events not stored: dropped on a full queue, or in a batch whose
    /// commit failed.
    public var lost: UInt64 = 0
    /// Transactions that committed events.
    public var batches: UInt64 = 0
    /// The largest batch committed.
    public var largestBatch: Int = 0
    /// Events removed by pruning.
    public var pruned: UInt64 = 0
    /// The last write failure, if any.
    public var lastFailure: StoreError?
}

extension StoreError: Hashable {
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.message == rhs.message
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}

extension Date {
    /// Microseconds since 1970, as the store writes timestamps.
    var storedMicroseconds: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded()) }

    init(storedMicroseconds: Int64) { self.init(timeIntervalSince1970: Double(storedMicroseconds) / 1_000_000) }
}
