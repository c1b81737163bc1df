import Glibc

/// A few facts about the store, kept beside it in `blegateway.ledger`,
/// outside SQLite's files: how many transactions were committed, the
/// newest event id handed out, and how many kept connections,
/// subscriptions and published items there were. At start-up they tell
/// what a damaged or lost write-ahead log rolled back (SQLite silently
/// drops the commits after a bad frame), and which event ids were handed
/// out but never stored (a full disk, a crash), so that a client resuming
/// across them is told of the gap.
///
/// The file has a fixed size, written in place: it needs no new disk
/// block, so it is written even when the disk is full.
struct Ledger: Equatable {
    /// The store this ledger is about (`meta.store_id`): a ledger left
    /// beside a file moved aside says nothing about a new one.
    var storeID: Int64 = 0
    /// Transactions committed (`meta.commits`).
    var commits: Int64 = 0
    /// The newest event id handed out, stored or not.
    var handedOut: UInt64 = 0
    var keptConnections: Int64 = 0
    var subscriptions: Int64 = 0
    var published: Int64 = 0

    var counts: StoreRecovery.Counts {
        StoreRecovery.Counts(
            keptConnections: Int(keptConnections), subscriptions: Int(subscriptions), published: Int(published))
    }

    /// The file's size: the text, padded with spaces.
    static let size = 256
    static let fileName = "blegateway.ledger"

    var encoded: [UInt8] {
        let text = """
            blegateway-ledger 1
            store \(storeID)
            commits \(commits)
            handed-out \(handedOut)
            kept \(keptConnections)
            subscriptions \(subscriptions)
            published \(published)

            """
        var bytes = Array(text.utf8.prefix(Self.size))
        bytes += [UInt8](repeating: UInt8(ascii: " "), count: Self.size - bytes.count)
        return bytes
    }

    /// Reads a ledger's text; nil unless it is one, whole.
    init?(parsing bytes: [UInt8]) {
        var fields: [Substring: Substring] = [:]
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["blegateway-ledger"] == "1", let store = fields["store"].flatMap({ Int64($0) }),
            let commits = fields["commits"].flatMap({ Int64($0) }),
            let handedOut = fields["handed-out"].flatMap({ UInt64($0) }),
            let kept = fields["kept"].flatMap({ Int64($0) }),
            let subscriptions = fields["subscriptions"].flatMap({ Int64($0) }),
            let published = fields["published"].flatMap({ Int64($0) })
        else { return nil }
        self.init(
            storeID: store, commits: commits, handedOut: handedOut, keptConnections: kept, subscriptions: subscriptions,
            published: published)
    }

    init(
        storeID: Int64 = 0, commits: Int64 = 0, handedOut: UInt64 = 0, keptConnections: Int64 = 0,
        subscriptions: Int64 = 0, published: Int64 = 0
    ) {
        self.storeID = storeID
        self.commits = commits
        self.handedOut = handedOut
        self.keptConnections = keptConnections
        self.subscriptions = subscriptions
        self.published = published
    }
}

/// The open ledger file. Used by the store's thread only.
final class LedgerFile {
    let path: String
    private let descriptor: Int32

    /// Opens (creating) the ledger in `directory`; nil if it cannot be
    /// (the store then runs without it, as before it existed).
    init?(directory: String) {
        path = directory.hasSuffix("/") ? directory + Ledger.fileName : directory + "/" + Ledger.fileName
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// The recorded ledger; nil for a new, short or foreign file.
    func read() -> Ledger? {
        var bytes = [UInt8](repeating: 0, count: Ledger.size)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Ledger.size, 0) }
        guard count == Ledger.size else { return nil }
        return Ledger(parsing: bytes)
    }

    /// Writes `ledger` in place; with `sync`, to the disk before returning.
    /// False if it could not be written.
    @discardableResult
    func write(_ ledger: Ledger, sync: Bool) -> Bool {
        let bytes = ledger.encoded
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, Ledger.size, 0) }
        guard written == Ledger.size else { return false }
        return !sync || fdatasync(descriptor) == 0
    }
}
