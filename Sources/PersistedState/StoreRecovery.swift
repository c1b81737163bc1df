/// What the store found lost when it opened, compared with the ledger it
/// keeps beside the file (see `Store.recovery`). It is also logged.
public struct StoreRecovery: Sendable, Hashable {
    /// Committed changes missing from the file: SQLite dropped them with a
    /// damaged or lost write-ahead log. 0 when nothing was rolled back.
    public var missingCommits: Int64
    /// Kept connections, standing subscriptions and published items the
    /// file held when the ledger was last written, and holds now.
    public var before: Counts
    public var after: Counts
    /// Event ids handed out whose events never reached the file (a full
    /// disk, a crash before their commit); a resuming client is told of
    /// them with a gap, and they are never handed out again.
    public var lostEventIDs: ClosedRange<UInt64>?

    public struct Counts: Sendable, Hashable {
        public var keptConnections: Int
        public var subscriptions: Int
        public var published: Int
    }
}
