import CSQLite
import Glibc

/// A failed SQLite call: its result code (extended) and message.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`).
    let code: Int32
    let message: String
    /// The operating system's error number behind an I/O failure
    /// (`sqlite3_system_errno`), 0 when there was none.
    let systemErrno: Int32

    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_READONLY`, ...).
    var primaryCode: Int32 { code & 0xff }

    var description: String { "\(message) (SQLite error \(code))" }

    init(code: Int32, message: String, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.systemErrno = systemErrno
    }

    /// The error of the last failed call on `handle`.
    init(code: Int32, handle: OpaquePointer?) {
        self.code = handle.map { sqlite3_extended_errcode($0) } ?? code
        self.message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.systemErrno = handle.map { sqlite3_system_errno($0) } ?? 0
    }

    /// The file is not a database, or is damaged.
    var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// The file system is full. SQLite says so itself only when it grows
    /// the database file; a write-ahead log or shared-memory file that
    /// cannot grow is a "disk I/O error" whose system error is ENOSPC.
    var isFull: Bool {
        primaryCode == SQLITE_FULL || (primaryCode == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }

    /// The file or its directory cannot be written (or opened at all).
    var isAccessProblem: Bool {
        primaryCode == SQLITE_READONLY || primaryCode == SQLITE_CANTOPEN || primaryCode == SQLITE_PERM
            || primaryCode == SQLITE_AUTH
    }
}
