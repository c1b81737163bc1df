#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Store {
    /// Stores a standing subscription and returns it with its new id.
    /// Durable when it returns.
    public func addSubscription(
        adapter: String, address: String, service: String? = nil,
        characteristic: StandingSubscription.Characteristic, mode: StandingSubscription.Mode, created: Date = Date(),
        owner: String? = nil
    ) async throws(StoreError) -> StandingSubscription {
        let (uuid, handle): (SQLValue, SQLValue) =
            switch characteristic {
            case .uuid(let uuid): (.text(uuid), .null)
            case .handle(let handle): (.null, .integer(Int64(handle)))
            }
        let id = try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Int64 in
            try database.prepare(
                """
                INSERT INTO subscriptions (adapter, address, service, characteristic, handle, mode, created_us, owner)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
            ).bind(
                .text(adapter), .text(address), .optionalText(service), uuid, handle, .text(mode.rawValue),
                .integer(created.storedMicroseconds), .optionalText(owner)
            ).run()
            return database.lastInsertedRowID
        }
        return StandingSubscription(
            id: id, adapter: adapter, address: address, service: service, characteristic: characteristic, mode: mode,
            created: Date(storedMicroseconds: created.storedMicroseconds), owner: owner)
    }

    /// Removes a standing subscription; returns false if there was none.
    /// Durable when it returns.
    @discardableResult
    public func removeSubscription(id: Int64) async throws(StoreError) -> Bool {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Bool in
            try database.prepare("DELETE FROM subscriptions WHERE id = ?").bind(.integer(id)).run()
            return database.changes > 0
        }
    }

    /// Every standing subscription, in id order.
    public func subscriptions() async throws(StoreError) -> [StandingSubscription] {
        try await worker.perform(transaction: false) { (database) throws(SQLiteError) in
            try database.prepare(
                """
                SELECT id, adapter, address, service, characteristic, handle, mode, created_us, owner
                FROM subscriptions ORDER BY id
                """
            ).rows { row in
                StandingSubscription(
                    id: row.integer(0), adapter: row.text(1), address: row.text(2), service: row.optionalText(3),
                    characteristic: row.isNull(4) ? .handle(UInt16(truncatingIfNeeded: row.integer(5))) : .uuid(row.text(4)),
                    // The table's CHECK admits only these two.
                    mode: StandingSubscription.Mode(rawValue: row.text(6)) ?? .notify,
                    created: Date(storedMicroseconds: row.integer(7)), owner: row.optionalText(8))
            }
        }
    }
}
