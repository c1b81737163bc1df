#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Store {
    /// Stores a published application or advertisement, replacing one of
    /// the same kind and id (and forgetting the values set on it).
    /// Durable when it returns.
    public func savePublished(_ item: PublishedItem) async throws(StoreError) {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) in
            try database.prepare(
                """
                INSERT OR REPLACE INTO published (kind, id, adapter, definition, created_us, owner)
                VALUES (?, ?, ?, ?, ?, ?)
                """
            ).bind(
                .text(item.kind.rawValue), .text(item.id), .text(item.adapter), .blob(item.definition),
                .integer(item.created.storedMicroseconds), .optionalText(item.owner)
            ).run()
            if item.kind == .application {
                try database.prepare("DELETE FROM published_values WHERE application = ?").bind(.text(item.id)).run()
                for (characteristic, value) in item.values {
                    try database.prepare(
                        "INSERT INTO published_values (application, characteristic, value) VALUES (?, ?, ?)"
                    ).bind(.text(item.id), .integer(Int64(characteristic)), .blob(value)).run()
                }
            }
        }
    }

    /// Forgets a published item (and an application's values); returns
    /// false if there was none. Durable when it returns.
    @discardableResult
    public func removePublished(_ kind: PublishedItem.Kind, id: String) async throws(StoreError) -> Bool {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Bool in
            try database.prepare("DELETE FROM published WHERE kind = ? AND id = ?")
                .bind(.text(kind.rawValue), .text(id)).run()
            let removed = database.changes > 0
            if kind == .application {
                try database.prepare("DELETE FROM published_values WHERE application = ?").bind(.text(id)).run()
            }
            return removed
        }
    }

    /// Stores the value a client set on a characteristic of a published
    /// application (by the characteristic's index); returns false, storing
    /// nothing, when no such application is stored. Durable when it returns.
    @discardableResult
    public func setPublishedValue(_ value: [UInt8], characteristic: Int, application: String) async throws(StoreError)
        -> Bool
    {
        try await worker.perform(transaction: true) { (database) throws(SQLiteError) -> Bool in
            try database.prepare(
                """
                INSERT OR REPLACE INTO published_values (application, characteristic, value)
                SELECT id, ?, ? FROM published WHERE kind = 'application' AND id = ?
                """
            ).bind(.integer(Int64(characteristic)), .blob(value), .text(application)).run()
            return database.changes > 0
        }
    }

    /// Every published item with its values, oldest first.
    public func publishedItems() async throws(StoreError) -> [PublishedItem] {
        try await worker.perform(transaction: false) { (database) throws(SQLiteError) in
            var items = try database.prepare(
                "SELECT kind, id, adapter, definition, created_us, owner FROM published ORDER BY created_us, kind, id"
            ).rows { row -> PublishedItem? in
                guard let kind = PublishedItem.Kind(rawValue: row.text(0)) else { return nil }
                return PublishedItem(
                    kind: kind, id: row.text(1), adapter: row.text(2), definition: row.blob(3),
                    created: Date(storedMicroseconds: row.integer(4)), owner: row.optionalText(5))
            }.compactMap { $0 }
            let values = try database.prepare("SELECT application, characteristic, value FROM published_values").rows {
                row in (row.text(0), Int(row.integer(1)), row.blob(2))
            }
            for (application, characteristic, value) in values {
                guard let index = items.firstIndex(where: { $0.kind == .application && $0.id == application }) else {
                    continue
                }
                items[index].values[characteristic] = value
            }
            return items
        }
    }
}
