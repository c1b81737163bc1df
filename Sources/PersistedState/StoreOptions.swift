/// How the store keeps the event log and how hard it syncs.
public struct StoreOptions: Sendable {
    /// How many events the log keeps at most; the oldest go first.
    public var maximumEventCount: Int = 100_000
    /// How many events a prune removes beyond the excess (pruning in
    /// batches, so that a full log is not pruned on every commit). The log
    /// then holds between `maximumEventCount - pruneBatch` and
    /// `maximumEventCount` events.
    public var pruneBatch: Int = 5_000
    /// How long an appended event may wait for companions before its batch
    /// is committed. With nobody waiting for a commit, a batch is committed
    /// this long after its first event, or at once when it reaches
    /// `batchSize`.
    public var batchInterval: Duration = .milliseconds(5)
    /// The most events in one transaction.
    public var batchSize: Int = 4_096
    /// The most events waiting for their commit; beyond it, appended events
    /// are not stored (counted in `EventLogStatistics.lost` and logged), so
    /// that a stuck disk never blocks or grows the notification path
    /// without bound.
    public var maximumQueuedEvents: Int = 200_000
    /// Whether each commit reaches the disk before it is acknowledged.
    public var durability: Durability = .full
    /// Whether `open` runs SQLite's `quick_check` over the whole file, so
    /// that damage is reported at start-up rather than when a damaged page
    /// is read.
    public var verifyOnOpen: Bool = true

    /// SQLite's `synchronous` setting for the write-ahead log.
    public enum Durability: String, Sendable {
        /// Every commit is synced to the disk (`synchronous = FULL`): an
        /// acknowledged write survives the process being killed and the
        /// machine losing power.
        case full
        /// Commits are synced at checkpoints only (`synchronous = NORMAL`):
        /// an acknowledged write survives the process being killed, but the
        /// last commits may be lost if the machine loses power.
        case normal
    }

    public init() {}
}
