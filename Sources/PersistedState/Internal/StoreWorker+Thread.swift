import AsyncPrimitives
import CSQLite
import Dispatch
import Glibc
import Synchronization

extension StoreWorker {
    /// Starts the thread, which opens the database; returns once it is open
    /// (or throws why it cannot be).
    func start() throws(StoreError) {
        let opened = Mutex<Result<Void, StoreError>?>(nil)
        let openedSignal = DispatchSemaphore(value: 0)
        start { result in
            opened.withLock { $0 = result }
            openedSignal.signal()
        }
        openedSignal.wait()
        if case .failure(let error) = opened.withLock({ $0 }) { throw error }
    }

    /// Starts the thread, which opens the database; returns at once, and
    /// the thread calls `opened` once the database is open (or why it
    /// cannot be), so that an asynchronous caller need not block a thread
    /// while the file is opened, checked and synced.
    func start(opened: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        let body = ThreadBody { [self] in
            csqlite_set_thread_name("state-store")
            serve(opened: opened)
            finish()
        }
        let context = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            Glibc.close(lockDescriptor)
            opened(.failure(StoreError(code: .io, path: path, message: "cannot start the state store's thread (error \(result))")))
            return
        }
        pthread_detach(thread)
    }

    /// The thread's life with the database: opens it, reports how that
    /// went, and runs the loop until closed. The database and its
    /// statements are released when this returns.
    private func serve(opened: (Result<Void, StoreError>) -> Void) {
        let database: Database
        let statements: Statements
        let ledgerFile = LedgerFile(directory: directory)
        var ledger: Ledger
        do {
            (database, ledger) = try openDatabase(ledgerFile)
            statements = try Statements(database)
        } catch {
            opened(.failure(error))
            return
        }
        ledgerFile?.write(ledger, sync: true)
        opened(.success(()))
        run(database, statements, ledgerFile, &ledger)
    }

    /// Opens, configures, migrates and checks the database, compares it
    /// with the ledger, and loads the event log's bounds. Returns the
    /// ledger of the database as opened.
    private func openDatabase(_ ledgerFile: LedgerFile?) throws(StoreError) -> (Database, Ledger) {
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            throw StoreError(error, path: path)
        }
        do {
            // Damage (or a file that is no database) shows on the first
            // read: journal_mode reads the header.
            let mode = try database.texts("PRAGMA journal_mode = WAL").first
            guard mode == "wal" else {
                throw StoreError(
                    code: .unwritable, path: path,
                    message: """
                        the state store \(path) cannot use SQLite's write-ahead log (journal mode \(mode ?? "unknown")); \
                        put --state-dir on a local file system
                        """)
            }
            try database.execute(
                """
                PRAGMA synchronous = \(options.durability == .full ? "FULL" : "NORMAL");
                PRAGMA busy_timeout = 5000;
                PRAGMA journal_size_limit = 16777216;
                """)
            if options.verifyOnOpen {
                let problems = try database.texts("PRAGMA quick_check")
                if problems != ["ok"] {
                    throw StoreError.corrupt(path, reason: problems.prefix(3).joined(separator: "; "))
                }
            }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        } catch {
            throw StoreError(code: .io, path: path, message: "\(error)")
        }
        _ = try Schema.migrate(database)
        do {
            // A write now, so that a store that cannot be written fails at
            // start-up rather than at the first event.
            let (next, now, recorded, lost) = try database.transaction {
                (database) throws(SQLiteError) -> (UInt64, Ledger, Ledger?, ClosedRange<UInt64>?) in
                let stored = try database.integer("SELECT value FROM meta WHERE key = 'next_event_id'") ?? 1
                let newest = try database.integer("SELECT max(id) FROM events") ?? 0
                var next = UInt64(max(stored, newest + 1, 1))
                var now = try Self.ledger(of: database)
                // A ledger left beside another file says nothing of this one.
                let recorded = ledgerFile?.read().flatMap { $0.storeID == now.storeID ? $0 : nil }
                // Ids a client may have seen whose events never reached the
                // file: recorded as a gap, never handed out again.
                var lost: ClosedRange<UInt64>?
                if let recorded, recorded.handedOut >= next {
                    lost = next...recorded.handedOut
                    try database.prepare("INSERT OR REPLACE INTO event_gaps (first, last) VALUES (?, ?)")
                        .bind(.integer(Int64(next)), .integer(Int64(recorded.handedOut))).run()
                    next = recorded.handedOut + 1
                }
                try database.prepare("UPDATE meta SET value = ? WHERE key = 'next_event_id'").bind(.integer(Int64(next))).run()
                try database.execute(Statements.countCommit)
                now.commits += 1
                now.handedOut = next - 1
                return (next, now, recorded, lost)
            }
            if let recorded { report(recorded, now: now, lost: lost) }
            let count = try database.integer("SELECT count(*) FROM events") ?? 0
            let oldest = try database.integer("SELECT min(id) FROM events")
            let newest = try database.integer("SELECT max(id) FROM events")
            state.withLock { state in
                state.nextID = next
                state.settledThrough = next - 1
                state.summary = EventLogSummary(
                    count: Int(count), oldestID: oldest.map(UInt64.init), newestID: newest.map(UInt64.init))
            }
            return (database, now)
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// The ledger's facts as `database` holds them.
    private static func ledger(of database: Database) throws(SQLiteError) -> Ledger {
        Ledger(
            storeID: try database.integer("SELECT value FROM meta WHERE key = 'store_id'") ?? 0,
            commits: try database.integer("SELECT value FROM meta WHERE key = 'commits'") ?? 0,
            handedOut: UInt64(max(0, (try database.integer("SELECT value FROM meta WHERE key = 'next_event_id'") ?? 1) - 1)),
            keptConnections: try database.integer("SELECT count(*) FROM kept_connections") ?? 0,
            subscriptions: try database.integer("SELECT count(*) FROM subscriptions") ?? 0,
            published: try database.integer("SELECT count(*) FROM published") ?? 0)
    }

    /// Says loudly what the file lost since the ledger was written: commits
    /// rolled back (SQLite drops a write-ahead log's frames from the first
    /// damaged one on), and event ids handed out but never stored.
    private func report(_ recorded: Ledger, now: Ledger, lost: ClosedRange<UInt64>?) {
        // `now` counts the start-up's own commit.
        let missing = max(0, recorded.commits - (now.commits - 1))
        guard missing > 0 || lost != nil else { return }
        let recovery = StoreRecovery(
            missingCommits: missing, before: recorded.counts, after: now.counts, lostEventIDs: lost)
        state.withLock { $0.recovery = recovery }
        if missing > 0 {
            logger.critical(
                """
                the state store \(path) was rolled back: its last \(missing) committed change(s) are missing (its \
                write-ahead log \(path)-wal was damaged or lost). It held \(recorded.keptConnections) kept \
                connection(s), \(recorded.subscriptions) standing subscription(s) and \(recorded.published) published \
                item(s); it now holds \(now.keptConnections), \(now.subscriptions) and \(now.published). Clients must \
                check and create again what they need; restore the file from a backup to get the rest back.
                """,
                metadata: ["path": "\(path)", "missing_commits": "\(missing)"])
        }
        if let lost {
            logger.warning(
                """
                event ids \(lost.lowerBound) to \(lost.upperBound) were handed out but never stored in \(path) (the \
                disk was full or stuck, or the gateway stopped before their commit): a client resuming across them \
                gets a replay-gap
                """,
                metadata: ["path": "\(path)", "first": "\(lost.lowerBound)", "last": "\(lost.upperBound)"])
        }
    }

    /// What the thread does next.
    private enum Work {
        case wait(until: ContinuousClock.Instant?)
        case commit(events: [PendingEvent], through: UInt64, jobs: [Job], last: Bool)
    }

    /// The thread's loop: commit due batches, run jobs, until closed.
    /// The ledger is written after every commit (synced after a failure
    /// and at the end), with the newest id handed out by then.
    private func run(_ database: Database, _ statements: Statements, _ ledgerFile: LedgerFile?, _ ledger: inout Ledger) {
        var persistedNextID = state.withLock { $0.nextID }
        while true {
            let work = state.withLock { state -> Work in
                let now = ContinuousClock.now
                let batchDue = state.firstQueuedAt.map { now >= $0 + options.batchInterval } ?? false
                // A waiter for an id not handed out yet makes nothing due.
                let waited = state.waiters.contains { $0.id < state.nextID }
                let due =
                    state.closing || !state.jobs.isEmpty || waited || batchDue
                    || state.queue.count >= options.batchSize
                guard due else {
                    return .wait(until: state.firstQueuedAt.map { $0 + options.batchInterval })
                }
                let events: [PendingEvent]
                if state.queue.count > options.batchSize {
                    events = Array(state.queue.prefix(options.batchSize))
                    state.queue.removeFirst(options.batchSize)
                    state.firstQueuedAt = now
                } else {
                    events = state.queue
                    state.queue.removeAll(keepingCapacity: true)
                    state.firstQueuedAt = nil
                }
                let through = state.queue.first.map { $0.id - 1 } ?? state.nextID - 1
                let jobs = state.jobs
                state.jobs.removeAll()
                return .commit(events: events, through: through, jobs: jobs, last: state.closing && state.queue.isEmpty)
            }
            switch work {
            case .wait(let deadline):
                if let deadline {
                    let remaining = ContinuousClock.now.duration(to: deadline)
                    _ = wakeup.wait(timeout: .now() + .nanoseconds(max(0, remaining.nanoseconds)))
                } else {
                    wakeup.wait()
                }
            case .commit(let events, let through, let jobs, let last):
                var settlement = Settlement(through: through, committed: 0, succeeded: true, failure: nil)
                if !events.isEmpty || through >= persistedNextID {
                    settlement = commit(events, through: through, database, statements)
                    if settlement.succeeded {
                        persistedNextID = through + 1
                        ledger.commits += 1
                    }
                }
                let resumptions = jobs.map { job in job(database) }
                if !jobs.isEmpty, let now = try? Self.ledger(of: database) { ledger = now }
                // Recorded before anyone hears of the commits, so that a
                // crash after an acknowledgement finds it in the ledger.
                ledger.handedOut = state.withLock { $0.nextID } - 1
                ledgerFile?.write(ledger, sync: !settlement.succeeded || last)
                settle(settlement)
                for resume in resumptions { resume() }
                if last { return }
            }
        }
    }

    /// Commits one batch (and the next id, the ids recorded as never
    /// stored, and a prune if the log is full) in one transaction, and
    /// says how to settle its waiters.
    private func commit(_ events: [PendingEvent], through: UInt64, _ database: Database, _ statements: Statements)
        -> Settlement
    {
        let (countBefore, gaps) = state.withLock { state in
            defer { state.unrecordedGaps.removeAll() }
            return (state.summary.count, state.unrecordedGaps)
        }
        let maximum = max(1, options.maximumEventCount)
        let keepAfterPrune = maximum - min(max(0, options.pruneBatch), maximum / 2)
        do {
            let pruned = try database.transaction { (database) throws(SQLiteError) -> Int in
                for event in events {
                    try statements.insertEvent.bind(
                        .integer(Int64(event.id)), .text(event.type), .optionalText(event.device),
                        .blob(event.data.bytes), .integer(event.timestamp.storedMicroseconds)
                    ).run()
                }
                try statements.updateNextID.bind(.integer(Int64(through + 1))).run()
                try statements.countCommit.run()
                for gap in gaps {
                    try statements.insertGap.bind(.integer(Int64(gap.lowerBound)), .integer(Int64(gap.upperBound))).run()
                }
                let count = countBefore + events.count
                guard count > maximum else { return 0 }
                try statements.prune.bind(.integer(Int64(count - keepAfterPrune - 1))).run()
                let pruned = database.changes
                try statements.pruneGaps.run()
                return pruned
            }
            let oldest: UInt64?
            if pruned > 0 || countBefore == 0 {
                oldest = try database.integer("SELECT min(id) FROM events").map(UInt64.init)
            } else {
                oldest = state.withLock { $0.summary.oldestID }
            }
            state.withLock { state in
                let count = countBefore + events.count - pruned
                state.summary = EventLogSummary(
                    count: count, oldestID: count == 0 ? nil : oldest,
                    newestID: events.last.map(\.id) ?? state.summary.newestID)
                state.statistics.pruned += UInt64(pruned)
                if !events.isEmpty {
                    state.statistics.batches += 1
                    state.statistics.largestBatch = max(state.statistics.largestBatch, events.count)
                }
            }
            return Settlement(through: through, committed: events.count, succeeded: true, failure: nil)
        } catch {
            state.withLock { $0.unrecordedGaps.insert(contentsOf: gaps, at: 0) }
            let failure = StoreError(error, path: path)
            logger.error(
                "the state store could not commit \(events.count) event(s)",
                metadata: ["path": "\(path)", "error": "\(failure.message)"])
            return Settlement(
                through: through, committed: 0, succeeded: false, failure: events.isEmpty ? nil : (events[0].id...through, failure, events.count))
        }
    }

    /// How a batch went: every id up to `through` is done, `committed`
    /// events were stored, or the ids of `failure` were not.
    private struct Settlement {
        let through: UInt64
        let committed: Int
        let succeeded: Bool
        let failure: (ids: ClosedRange<UInt64>, error: StoreError, count: Int)?
    }

    /// Marks every id up to `through` as done and resumes their waiters.
    private func settle(_ settlement: Settlement) {
        let (through, committed, failure) = (settlement.through, settlement.committed, settlement.failure)
        let (ready, recovered) = state.withLock { state -> ([(Waiter, StoreError?)], Bool) in
            state.settledThrough = max(state.settledThrough, through)
            state.statistics.committed += UInt64(committed)
            if let failure {
                Self.recordFailure(failure.ids, failure.error, in: &state)
                state.statistics.lost += UInt64(failure.count)
            }
            var ready: [(Waiter, StoreError?)] = []
            state.waiters.removeAll { waiter in
                guard waiter.id <= state.settledThrough else { return false }
                ready.append((waiter, state.failures.last(where: { $0.ids.contains(waiter.id) })?.error))
                return true
            }
            let recovered = state.dropping && committed > 0 && state.queue.count < options.maximumQueuedEvents
            if recovered { state.dropping = false }
            return (ready, recovered)
        }
        for (waiter, error) in ready {
            if let error { waiter.continuation.resume(throwing: error) } else { waiter.continuation.resume() }
        }
        if recovered { logger.notice("the state store is keeping up again", metadata: ["path": "\(path)"]) }
    }

    /// The thread is done: fails what still waits, wakes `close`.
    ///
    /// Jobs need no failing here: the loop's last round takes every job
    /// accepted before `closing` was set, and none is accepted after.
    private func finish() {
        Glibc.close(lockDescriptor)
        let (waiters, closers) = state.withLock { state in
            state.finished = true
            state.closing = true
            defer {
                state.waiters.removeAll()
                state.closeWaiters.removeAll()
            }
            return (state.waiters, state.closeWaiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: StoreError.closed(path)) }
        for closer in closers { closer.resume() }
    }
}

/// The statements the thread runs on every batch, prepared once.
struct Statements {
    let insertEvent: Statement
    let updateNextID: Statement
    let prune: Statement
    let countCommit: Statement
    let insertGap: Statement
    let pruneGaps: Statement

    /// Counts a transaction in `meta.commits` (see `Ledger`).
    static let countCommit = "UPDATE meta SET value = value + 1 WHERE key = 'commits'"

    init(_ database: Database) throws(StoreError) {
        do {
            insertEvent = try database.prepare(
                "INSERT INTO events (id, type, device, data, timestamp_us) VALUES (?, ?, ?, ?, ?)")
            updateNextID = try database.prepare("UPDATE meta SET value = ? WHERE key = 'next_event_id'")
            // Everything up to the event at that offset from the oldest:
            // `id` is the rowid, so this is a range delete.
            prune = try database.prepare(
                "DELETE FROM events WHERE id <= (SELECT id FROM events ORDER BY id LIMIT 1 OFFSET ?)")
            countCommit = try database.prepare(Self.countCommit)
            insertGap = try database.prepare("INSERT OR REPLACE INTO event_gaps (first, last) VALUES (?, ?)")
            // Gaps before the oldest event kept: the replay says those
            // events are gone anyway.
            pruneGaps = try database.prepare("DELETE FROM event_gaps WHERE last < (SELECT min(id) FROM events)")
        } catch {
            throw StoreError(error, path: database.path)
        }
    }
}

/// A closure handed to a new thread.
final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
