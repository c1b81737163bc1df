import Glibc
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The gateway's persisted state: kept connections, standing subscriptions
/// and the event log, in one SQLite database (write-ahead log) in the state
/// directory.
///
/// One thread of the store's own runs every statement. Kept connections and
/// subscriptions are written one transaction per call, and a call returns
/// only once its transaction is committed (durable, with the default
/// `.full` durability, even against power loss). Events are appended to a
/// queue without waiting and committed in batches (see `append`); an event
/// is acknowledged once `waitUntilCommitted` returns for it.
///
/// What a crash can lose: nothing whose call returned (kept connections,
/// subscriptions) or whose commit was awaited; of the event log, only the
/// events appended in the last `StoreOptions.batchInterval` (5 ms by
/// default) plus the commit then in progress. Ids are never reused: the
/// next id is stored with every batch.
///
/// Only one process may have a state directory open: the store holds an
/// exclusive lock on `blegateway.lock` in it while open.
public final class Store: Sendable {
    /// The database file's name in the state directory.
    public static let fileName = "blegateway.sqlite"
    /// The lock file's name in the state directory.
    public static let lockFileName = "blegateway.lock"
    /// The schema version this build writes.
    public static var schemaVersion: Int { Int(Schema.latestVersion) }

    /// The database file.
    public let path: String
    public let options: StoreOptions
    let worker: StoreWorker

    /// Opens the store in `directory` (created if missing), creating the
    /// database on first use and migrating an older one.
    ///
    /// Blocks while it opens, migrates and (with `verifyOnOpen`) checks the
    /// file: call it at start-up. Throws a `StoreError` that names the file
    /// and the fix when the directory cannot be written, the file is
    /// damaged, is from a newer gateway, is another program's, or another
    /// process has the store open. The store never resets a file it cannot
    /// use.
    public static func open(
        directory: String, options: StoreOptions = StoreOptions(),
        logger: Logger = Logger(label: "blegateway.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(StoreError) -> Store {
        let worker = try prepare(directory: directory, options: options, logger: logger)
        try worker.start()
        return Store(path: worker.path, options: options, worker: worker)
    }

    /// Opens the store like `open(directory:options:logger:)`, suspending
    /// rather than blocking the caller's thread while the store's own
    /// thread opens, migrates, checks and syncs the file: the gateway
    /// starts its other parts meanwhile. The directory is still made and
    /// locked on the caller's thread: quick, unless another process holds
    /// the lock, which is tried again for up to 2 s (see
    /// `StateDirectory.lock`) before the open fails as `.inUse`.
    public static func openWithoutBlocking(
        directory: String, options: StoreOptions = StoreOptions(),
        logger: Logger = Logger(label: "blegateway.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws(StoreError) -> Store {
        let worker = try prepare(directory: directory, options: options, logger: logger)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, StoreError>, Never>) in
            worker.start { continuation.resume(returning: $0) }
        }
        try result.get()
        return Store(path: worker.path, options: options, worker: worker)
    }

    /// The directory made and locked, and the worker that will open the
    /// database in it.
    private static func prepare(directory: String, options: StoreOptions, logger: Logger) throws(StoreError) -> StoreWorker {
        try StateDirectory.create(directory)
        let path = directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
        let lock = try StateDirectory.lock(directory, databasePath: path)
        // SQLite would take an empty file for a new database.
        var status = stat()
        if stat(path, &status) == 0, status.st_size == 0 {
            Glibc.close(lock)
            throw StoreError.empty(path)
        }
        return StoreWorker(path: path, directory: directory, options: options, lockDescriptor: lock, logger: logger)
    }

    private init(path: String, options: StoreOptions, worker: StoreWorker) {
        self.path = path
        self.options = options
        self.worker = worker
    }

    deinit { worker.requestClose() }

    /// Commits the events still queued, then closes the database and
    /// releases the directory's lock. Later calls throw `.closed`.
    public func close() async {
        await worker.close()
    }

    /// What the store found lost when it opened (changes rolled back, event
    /// ids never stored), also logged then; nil when nothing was.
    public var recovery: StoreRecovery? { worker.state.withLock { $0.recovery } }

    /// The SQLite library the store runs on, such as "3.40.1".
    public static var sqliteVersion: String { Database.libraryVersion }
}
