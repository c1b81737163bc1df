/// Why the store cannot open, or could not keep something.
///
/// The `description` is a whole sentence for the user: what is wrong, the
/// file it is about, and what to do. The store never resets a file it
/// cannot use; it reports it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is (extensible).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file is not an SQLite database, or is damaged.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The directory or the file cannot be created, opened or written.
        public static let unwritable = Code(rawValue: "unwritable")
        /// Another process has the store open.
        public static let inUse = Code(rawValue: "in-use")
        /// The file was written by a newer gateway.
        public static let newerSchema = Code(rawValue: "newer-schema")
        /// The file is another program's SQLite database.
        public static let notOurs = Code(rawValue: "not-ours")
        /// The store was closed.
        public static let closed = Code(rawValue: "closed")
        /// The event was not stored: the queue of events waiting for their
        /// commit was full (the disk is too slow or stuck).
        public static let dropped = Code(rawValue: "dropped")
        /// The disk holding the store is full.
        public static let diskFull = Code(rawValue: "disk-full")
        /// The file is empty: not a state store (and not adopted as a new one).
        public static let empty = Code(rawValue: "empty")
        /// Any other failure of the file system or SQLite.
        public static let io = Code(rawValue: "io")
    }

    public let code: Code
    /// The file (or directory) the failure is about.
    public let path: String
    /// The whole explanation, with the fix where there is one.
    public let message: String
    /// SQLite's extended result code, when SQLite reported the failure.
    public let sqliteCode: Int32?

    public var description: String { message }

    public init(code: Code, path: String, message: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.sqliteCode = sqliteCode
    }
}

extension StoreError {
    /// Classifies a failed SQLite call on the database at `path`.
    init(_ error: SQLiteError, path: String) {
        if error.isCorruption {
            self = .corrupt(path, reason: error.message, sqliteCode: error.code)
        } else if error.isAccessProblem {
            self.init(
                code: .unwritable, path: path,
                message: """
                    the state store \(path) cannot be written (\(error.message)). Give the gateway's user write access \
                    to the file and its directory (SQLite also creates \(path)-wal and \(path)-shm beside it), \
                    or choose another directory with --state-dir.
                    """,
                sqliteCode: error.code)
        } else if error.isFull {
            self.init(
                code: .diskFull, path: path,
                message: "the state store \(path) cannot grow: the disk is full (\(error.message)). Free some space.",
                sqliteCode: error.code)
        } else {
            self.init(
                code: .io, path: path, message: "the state store \(path) failed: \(error.message)", sqliteCode: error.code)
        }
    }

    static func corrupt(_ path: String, reason: String, sqliteCode: Int32? = nil) -> StoreError {
        StoreError(
            code: .corrupt, path: path,
            message: """
                the state store \(path) is damaged or not a database (\(reason)). The gateway does not reset it: \
                move the file (and any \(path)-wal and \(path)-shm beside it) aside to start with an empty state, \
                or restore it from a backup.
                """,
            sqliteCode: sqliteCode)
    }

    static func empty(_ path: String) -> StoreError {
        StoreError(
            code: .empty, path: path,
            message: """
                the state store \(path) is an empty file (0 bytes): it was truncated, or made by another program. \
                The gateway does not adopt it as a new store: delete it (and any \(path)-wal beside it) to start \
                with an empty state, or restore it from a backup.
                """)
    }

    static func newerSchema(_ path: String, found: Int64, supported: Int64) -> StoreError {
        StoreError(
            code: .newerSchema, path: path,
            message: """
                the state store \(path) has schema version \(found), written by a newer blegateway; this one reads \
                versions up to \(supported). Run the newer blegateway, or move the file aside to start with an \
                empty state.
                """)
    }

    static func notOurs(_ path: String) -> StoreError {
        StoreError(
            code: .notOurs, path: path,
            message: """
                \(path) is an SQLite database of another program, not a blegateway state store. Choose an empty \
                directory with --state-dir, or move the file aside.
                """)
    }

    static func closed(_ path: String) -> StoreError {
        StoreError(code: .closed, path: path, message: "the state store \(path) is closed")
    }
}
