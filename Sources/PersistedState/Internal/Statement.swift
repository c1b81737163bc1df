import CSQLite

/// A prepared SQLite statement (`sqlite3_stmt`). Used by one thread at a
/// time, like the `Database` it belongs to; finalized when released.
final class Statement {
    private let handle: OpaquePointer
    private let database: OpaquePointer

    init(sql: String, database: OpaquePointer) throws(SQLiteError) {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(database, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: result, handle: database)
        }
        self.handle = statement
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds parameters 1, 2, ... in order, after clearing earlier ones.
    @discardableResult
    func bind(_ values: SQLValue...) throws(SQLiteError) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let integer): result = sqlite3_bind_int64(handle, index, integer)
            case .text(let text):
                result = csqlite_bind_text(handle, index, text, -1)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { csqlite_bind_blob(handle, index, $0.baseAddress, Int32($0.count)) }
            }
            guard result == SQLITE_OK else { throw SQLiteError(code: result, handle: database) }
        }
        return self
    }

    /// Runs the statement to its end (for statements that return no rows).
    func run() throws(SQLiteError) {
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Advances to the next row: true if there is one, false at the end.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result:
            let error = SQLiteError(code: result, handle: database)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Every row, each read by `row` while it is current.
    func rows<Row>(_ row: (Statement) -> Row) throws(SQLiteError) -> [Row] {
        var rows: [Row] = []
        while try step() { rows.append(row(self)) }
        sqlite3_reset(handle)
        return rows
    }

    /// Releases the statement's read of the database until it runs again.
    func reset() { sqlite3_reset(handle) }

    // Columns of the current row, from 0.

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// A value bound to a statement parameter.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    static func optionalText(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }
}
