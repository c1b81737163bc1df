/// The store's tables, as a list of migrations: migration `n` (counting
/// from 1) turns a version `n - 1` database into version `n`. A released
/// migration is never edited; a change is a new one appended to the list.
///
/// The version is SQLite's `user_version` header field; `application_id`
/// marks the file as the gateway's, so that another program's database in
/// the state directory is refused rather than written into.
enum Schema {
    /// "BLEG", in the header's `application_id` field.
    static let applicationID: Int64 = 0x424C_4547

    static let migrations: [String] = [
        // 1: kept connections, standing subscriptions, the event log.
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY NOT NULL,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO meta (key, value) VALUES ('next_event_id', 1);
        CREATE TABLE kept_connections (
            adapter TEXT NOT NULL,
            address TEXT NOT NULL,
            options BLOB NOT NULL,
            created_us INTEGER NOT NULL,
            PRIMARY KEY (adapter, address)
        ) WITHOUT ROWID;
        CREATE TABLE subscriptions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            adapter TEXT NOT NULL,
            address TEXT NOT NULL,
            service TEXT,
            characteristic TEXT,
            handle INTEGER,
            mode TEXT NOT NULL CHECK (mode IN ('notify', 'indicate')),
            created_us INTEGER NOT NULL,
            CHECK ((characteristic IS NULL) <> (handle IS NULL))
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            type TEXT NOT NULL,
            device TEXT,
            attribute TEXT,
            data BLOB NOT NULL,
            timestamp_us INTEGER NOT NULL
        );
        """,
        // 2: what the peripheral role publishes, and the characteristic
        // values clients set since.
        """
        CREATE TABLE published (
            kind TEXT NOT NULL CHECK (kind IN ('application', 'advertisement')),
            id TEXT NOT NULL,
            adapter TEXT NOT NULL,
            definition BLOB NOT NULL,
            created_us INTEGER NOT NULL,
            PRIMARY KEY (kind, id)
        ) WITHOUT ROWID;
        CREATE TABLE published_values (
            application TEXT NOT NULL,
            characteristic INTEGER NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (application, characteristic)
        ) WITHOUT ROWID;
        """,
        // 3: who created each kept connection, subscription and published
        // item (for per-client quotas); the ids handed out but never
        // stored; a count of commits, to tell a rolled-back file.
        """
        ALTER TABLE kept_connections ADD COLUMN owner TEXT;
        ALTER TABLE subscriptions ADD COLUMN owner TEXT;
        ALTER TABLE published ADD COLUMN owner TEXT;
        CREATE TABLE event_gaps (
            first INTEGER PRIMARY KEY,
            last INTEGER NOT NULL CHECK (last >= first)
        );
        INSERT INTO meta (key, value) VALUES ('commits', 0);
        INSERT INTO meta (key, value) VALUES ('store_id', random() & 9223372036854775807);
        """,
        // 4: no attribute column for events: nothing wrote it (an event
        // names its attribute in its JSON), so it only ever held NULL.
        """
        ALTER TABLE events DROP COLUMN attribute;
        """,
    ]

    /// The version this build writes.
    static var latestVersion: Int64 { Int64(migrations.count) }

    /// Brings `database` to the latest version in one transaction (a new
    /// file gets every migration with one sync of the write-ahead log
    /// rather than one per migration, and no file is ever left between two
    /// versions), and returns the version it found. Throws
    /// `StoreError.Code.newerSchema` or `.notOurs` without changing anything.
    static func migrate(_ database: Database) throws(StoreError) -> Int64 {
        let path = database.path
        do {
            let found = try database.integer("PRAGMA user_version") ?? 0
            let application = try database.integer("PRAGMA application_id") ?? 0
            if application != applicationID {
                let tables = try database.integer("SELECT count(*) FROM sqlite_schema") ?? 0
                if application != 0 || tables > 0 || found != 0 { throw StoreError.notOurs(path) }
            }
            guard found <= latestVersion else {
                throw StoreError.newerSchema(path, found: found, supported: latestVersion)
            }
            if found < latestVersion {
                try database.transaction { (database) throws(SQLiteError) in
                    for version in found..<latestVersion { try database.execute(migrations[Int(version)]) }
                    try database.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(latestVersion)")
                }
            }
            return found
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        } catch {
            throw StoreError(code: .io, path: path, message: "\(error)")
        }
    }
}
