import Foundation
import Testing
@testable import PersistedState

/// A file an older gateway wrote opens in this one: its rows are kept and
/// the schema is brought to the latest version.
@Suite struct SchemaMigrationTests {
    /// A version 3 file: the released migrations 1 to 3 (never edited once
    /// released), with an event in the `attribute` column version 4 drops.
    func writeVersion3(_ path: String, moment: Date) throws {
        let database = try Database(path: path)
        for migration in Schema.migrations.prefix(3) { try database.execute(migration) }
        try database.execute(
            """
            INSERT INTO events (id, type, device, attribute, data, timestamp_us)
                VALUES (1, 'adapter-state', NULL, NULL, '{"state":"on"}', \(moment.storedMicroseconds));
            INSERT INTO events (id, type, device, attribute, data, timestamp_us)
                VALUES (2, 'characteristic-value', 'AA:BB:CC:DD:EE:01', '180d/2a37', '{"value":"0e77"}', \(moment.storedMicroseconds));
            UPDATE meta SET value = 3 WHERE key = 'next_event_id';
            INSERT INTO kept_connections (adapter, address, options, created_us) VALUES ('hci0', 'AA:BB:CC:DD:EE:01', X'', \(moment.storedMicroseconds));
            PRAGMA application_id = \(Schema.applicationID);
            PRAGMA user_version = 3;
            """)
    }

    @Test func aVersion3FileKeepsItsEventsAndLosesTheAttributeColumn() async throws {
        let temporary = try TemporaryDirectory()
        let moment = Date(timeIntervalSince1970: 1_750_000_000.5)
        try writeVersion3(temporary.file(Store.fileName), moment: moment)

        let store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(try await store.events(after: 0) == [
            StoredEvent(id: 1, type: "adapter-state", device: nil, data: Array(#"{"state":"on"}"#.utf8), timestamp: moment),
            StoredEvent(
                id: 2, type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: Array(#"{"value":"0e77"}"#.utf8),
                timestamp: moment),
        ])
        #expect(try await store.keptConnections().map(\.address) == ["AA:BB:CC:DD:EE:01"])
        #expect(store.nextEventID == 3)
        // New events are written to the migrated table.
        let id = store.append(type: "empty", data: [], timestamp: moment)
        try await store.waitUntilCommitted(id)
        #expect(try await store.events(after: 2).map(\.type) == ["empty"])
        await store.close()

        #expect(headerField(temporary.file(Store.fileName), at: 60) == UInt32(Store.schemaVersion))
        let database = try Database(path: temporary.file(Store.fileName))
        #expect(try database.texts("SELECT name FROM pragma_table_info('events')") == ["id", "type", "device", "data", "timestamp_us"])
    }
}
