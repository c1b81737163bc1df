#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Store {
    /// Stores a kept connection, replacing the one with the same adapter and
    /// address (its `created` time is kept). Returns true if it is new.
    /// Durable when it returns.
    @discardableResult
    public func keep(_ connection: KeptConnection) async throws(StoreError) -> Bool {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Bool in
            try database.prepare(
                """
                INSERT INTO kept_connections (adapter, address, options, created_us, owner) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (adapter, address) DO NOTHING
                """
            ).bind(
                .text(connection.adapter), .text(connection.address), .blob(connection.options),
                .integer(connection.created.storedMicroseconds), .optionalText(connection.owner)
            ).run()
            guard database.changes == 0 else { return true }
            try database.prepare("UPDATE kept_connections SET options = ? WHERE adapter = ? AND address = ?")
                .bind(.blob(connection.options), .text(connection.adapter), .text(connection.address)).run()
            return false
        }
    }

    /// Forgets a kept connection; returns false if there was none.
    /// Durable when it returns.
    @discardableResult
    public func removeKeptConnection(adapter: String, address: String) async throws(StoreError) -> Bool {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Bool in
            try database.prepare("DELETE FROM kept_connections WHERE adapter = ? AND address = ?")
                .bind(.text(adapter), .text(address)).run()
            return database.changes > 0
        }
    }

    /// Every kept connection, oldest first.
    public func keptConnections() async throws(StoreError) -> [KeptConnection] {
        try await worker.perform(transaction: false) { (database) throws(SQLiteError) in
            try database.prepare(
                """
                SELECT adapter, address, options, created_us, owner FROM kept_connections
                ORDER BY created_us, adapter, address
                """
            ).rows { row in
                KeptConnection(
                    adapter: row.text(0), address: row.text(1), options: row.blob(2),
                    created: Date(storedMicroseconds: row.integer(3)), owner: row.optionalText(4))
            }
        }
    }
}
