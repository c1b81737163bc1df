import Dispatch
import Glibc
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The store's thread and the queues that feed it.
///
/// One thread owns the `Database`: it opens it, runs every statement on it
/// and closes it, so no SQLite handle ever crosses threads. Callers hand it
/// work through `state`: events to append (committed together, one
/// transaction per batch), jobs (each its own transaction), and waiters
/// for a commit. The thread sleeps on `wakeup` when there is nothing due.
final class StoreWorker: Sendable {
    /// An event waiting for its batch.
    struct PendingEvent: Sendable {
        let id: UInt64
        let type: String
        let device: String?
        let data: Payload
        let timestamp: Date
    }

    /// An event's JSON: given, or made on the store's thread when its batch
    /// is committed (so the producer does not pay for encoding).
    enum Payload: Sendable {
        case bytes([UInt8])
        case deferred(@Sendable () -> [UInt8])

        var bytes: [UInt8] {
            switch self {
            case .bytes(let bytes): bytes
            case .deferred(let make): make()
            }
        }
    }

    /// Work run on the thread; it returns how to resume its caller, which
    /// the thread does once the ledger records the work's commit.
    typealias Job = @Sendable (Database) -> @Sendable () -> Void

    struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct State {
        /// The id the next appended or reserved event gets.
        var nextID: UInt64 = 1
        var queue: [PendingEvent] = []
        /// When the oldest queued event was appended.
        var firstQueuedAt: ContinuousClock.Instant?
        var jobs: [Job] = []
        var waiters: [Waiter] = []
        /// Every id up to this one is committed, or failed (see `failures`).
        var settledThrough: UInt64 = 0
        /// The most recent ids that were not stored, and why.
        var failures: [(ids: ClosedRange<UInt64>, error: StoreError)] = []
        /// Ids not stored (dropped or failed) and not yet recorded in the
        /// `event_gaps` table, which the next committed batch does.
        var unrecordedGaps: [ClosedRange<UInt64>] = []
        /// Appends are being dropped (logged once per streak).
        var dropping = false
        var summary = EventLogSummary(count: 0, oldestID: nil, newestID: nil)
        var statistics = EventLogStatistics()
        var closing = false
        var finished = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// What was found lost at open, if anything.
        var recovery: StoreRecovery?
    }

    /// How many failed ranges are remembered for late waiters.
    static let rememberedFailures = 64

    let path: String
    /// The state directory, where the ledger lives beside the database.
    let directory: String
    let options: StoreOptions
    let logger: Logger
    let state = Mutex(State())
    let wakeup = DispatchSemaphore(value: 0)
    /// The descriptor holding the state directory's lock; the thread closes
    /// it after the database.
    let lockDescriptor: Int32

    init(path: String, directory: String, options: StoreOptions, lockDescriptor: Int32, logger: Logger) {
        self.path = path
        self.directory = directory
        self.options = options
        self.lockDescriptor = lockDescriptor
        self.logger = logger
    }

    // MARK: Callers' side

    /// Queues an event; never blocks on the disk.
    func append(type: String, device: String?, data: Payload, timestamp: Date) -> UInt64 {
        let (id, wake, startedDropping) = state.withLock { state -> (UInt64, Bool, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.statistics.appended += 1
            guard !state.closing, state.queue.count < options.maximumQueuedEvents else {
                let reason: StoreError =
                    state.closing
                    ? .closed(path)
                    : StoreError(
                        code: .dropped, path: path,
                        message: """
                            an event was not stored in \(path): \(options.maximumQueuedEvents) events were already \
                            waiting for the disk
                            """)
                Self.recordFailure(id...id, reason, in: &state)
                state.statistics.lost += 1
                let firstOfEpisode = !state.closing && !state.dropping
                if !state.closing { state.dropping = true }
                return (id, false, firstOfEpisode)
            }
            state.queue.append(
                PendingEvent(id: id, type: type, device: device, data: data, timestamp: timestamp))
            if state.queue.count == 1 {
                state.firstQueuedAt = .now
                return (id, true, false)
            }
            return (id, state.queue.count == options.batchSize, false)
        }
        if wake { wakeup.signal() }
        if startedDropping {
            logger.warning(
                "the state store is not keeping up: events are not being stored",
                metadata: ["path": "\(path)", "queued": "\(options.maximumQueuedEvents)"])
        }
        return id
    }

    func reserveID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Waits until the event `id` is committed; throws if it will not be.
    func waitUntilCommitted(_ id: UInt64) async throws(StoreError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, StoreError>? in
                    if id <= state.settledThrough {
                        return state.failures.last(where: { $0.ids.contains(id) }).map { .failure($0.error) } ?? .success(())
                    }
                    if state.finished || (state.closing && id >= state.nextID) { return .failure(.closed(path)) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) } else { wakeup.signal() }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .io, path: path, message: "\(error)")
        }
    }

    /// Runs `body` on the thread, in its own transaction if `transaction`.
    func perform<Value: Sendable>(
        transaction: Bool, _ body: @escaping @Sendable (Database) throws(SQLiteError) -> Value
    ) async throws(StoreError) -> Value {
        let path = path
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let job: Job = { database in
                    do throws(SQLiteError) {
                        let value: Value
                        if transaction {
                            value = try database.transaction { (database) throws(SQLiteError) in
                                let value = try body(database)
                                try database.execute(Statements.countCommit)
                                return value
                            }
                        } else {
                            value = try body(database)
                        }
                        return { continuation.resume(returning: value) }
                    } catch {
                        return { continuation.resume(throwing: StoreError(error, path: path)) }
                    }
                }
                let accepted = state.withLock { state in
                    guard !state.closing else { return false }
                    state.jobs.append(job)
                    return true
                }
                if accepted { wakeup.signal() } else { continuation.resume(throwing: StoreError.closed(path)) }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .io, path: path, message: "\(error)")
        }
    }

    /// Commits what is queued, stops the thread and closes the database.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                state.closing = true
                if state.finished { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() } else { wakeup.signal() }
        }
    }

    /// Asks the thread to stop without waiting for it.
    func requestClose() {
        state.withLock { $0.closing = true }
        wakeup.signal()
    }

    static func recordFailure(_ ids: ClosedRange<UInt64>, _ error: StoreError, in state: inout State) {
        if let last = state.unrecordedGaps.last, last.upperBound + 1 == ids.lowerBound {
            state.unrecordedGaps[state.unrecordedGaps.count - 1] = last.lowerBound...ids.upperBound
        } else {
            state.unrecordedGaps.append(ids)
            // Bounded: two old gaps become one that spans both (a client
            // may be told of a gap wider than it was, never of none).
            if state.unrecordedGaps.count > rememberedFailures {
                let merged = state.unrecordedGaps[0].lowerBound...state.unrecordedGaps[1].upperBound
                state.unrecordedGaps.replaceSubrange(0...1, with: [merged])
            }
        }
        if let last = state.failures.last, last.error == error, last.ids.upperBound + 1 == ids.lowerBound {
            state.failures[state.failures.count - 1].ids = last.ids.lowerBound...ids.upperBound
        } else {
            state.failures.append((ids, error))
            if state.failures.count > rememberedFailures { state.failures.removeFirst() }
        }
        state.statistics.lastFailure = error
    }
}
