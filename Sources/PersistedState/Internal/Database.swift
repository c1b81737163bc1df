import CSQLite

/// An open SQLite database (`sqlite3*`).
///
/// Not `Sendable`: the store's writer thread creates it, uses it alone and
/// closes it, so SQLite's own locking is not relied on (the library is
/// opened with `SQLITE_OPEN_NOMUTEX`).
final class Database {
    let path: String
    private let handle: OpaquePointer

    /// Opens (creating if needed) the database file at `path`.
    init(path: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError(code: result, handle: handle)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        self.path = path
        self.handle = handle
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw SQLiteError(code: result, handle: handle) }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(sql: sql, database: handle)
    }

    /// The first column of the first row of `sql`, as an integer.
    func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.integer(0)
    }

    /// The first column of every row of `sql`, as text.
    func texts(_ sql: String) throws(SQLiteError) -> [String] {
        try prepare(sql).rows { $0.text(0) }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, so that it
    /// takes the write lock at once), committed if `body` returns and rolled
    /// back if it throws.
    func transaction<Result>(_ body: (Database) throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body(self)
            try execute("COMMIT")
            return result
        } catch {
            // A failed COMMIT may leave the transaction open; a failed
            // statement leaves it open for sure.
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the last INSERT.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The SQLite library's version, such as "3.40.1".
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
