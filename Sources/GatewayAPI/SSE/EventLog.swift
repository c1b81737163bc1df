import HTTPServer
import Logging
import Metrics
import PersistedState
import Synchronization

/// The gateway's event sequence: every event gets the next id, is kept in a
/// bounded replay buffer, and written to every open stream whose filter
/// wants it. An event is encoded as an SSE frame once, when the first stream
/// takes it: one that no stream ever takes costs no encoding.
///
/// A stream that resumes from `Last-Event-ID` catches up at the pace its
/// client reads: it pulls the buffered events a batch at a time (see
/// `StreamWriter.pull`), and in the step that finds nothing left to replay
/// it joins the live streams, under the same lock that publishing takes, so
/// it sees every event once, in id order, with no gap. The buffer answers
/// in `EventPage`s; a persistent store can answer the same pages for ids
/// older than the buffer holds, read in the (asynchronous) refill before
/// the replay reaches the buffer.
///
/// With a `Store`, every published event is also appended to the store's
/// event log (queued, committed in batches off this path) and takes its id
/// from the store's sequence, so ids go on increasing across restarts; a
/// stream resuming from an id older than the buffer holds, or from before a
/// restart, is served from the store until it reaches the buffer.
public final class EventLog: Sendable {
    struct Subscriber {
        let filter: EventFilter
        let writer: StreamWriter
    }

    /// A stream still catching up: the id of the last past event it has
    /// been through (delivered, or skipped by its filter).
    struct Replay {
        let filter: EventFilter
        var position: UInt64
    }

    struct State {
        var nextID: UInt64 = 1
        var buffer: ReplayBuffer
        var subscribers: [UInt64: Subscriber] = [:]
        var replays: [UInt64: Replay] = [:]
        var nextSubscriber: UInt64 = 1
        /// `blegateway_events_total{type}`, one counter per event type seen,
        /// kept here so that publishing counts under the lock it already holds.
        var counters: [String: Counter] = [:]
        /// `blegateway_characteristic_values_total{device}`: values received, per
        /// device, for the first `countedDevices` devices; the rest share
        /// `device="other"`, so a busy street cannot grow the label set
        /// without bound.
        var valueCounters: [String: Counter] = [:]

        mutating func count(_ type: String, device: String?) {
            if let counter = counters[type] {
                counter.increment()
            } else {
                let counter = Counter(label: "blegateway_events_total", dimensions: [("type", type)])
                counters[type] = counter
                counter.increment()
            }
            if type == GatewayEvent.characteristicValue, let device { countValue(from: device) }
        }

        private mutating func countValue(from device: String) {
            if let counter = valueCounters[device] { return counter.increment() }
            let label = valueCounters.count < EventLog.countedDevices ? device : "other"
            let counter =
                valueCounters[label]
                ?? Counter(label: "blegateway_characteristic_values_total", dimensions: [("device", label)])
            valueCounters[label] = counter
            counter.increment()
        }
    }

    private let state: Mutex<State>
    /// Where events are kept beyond the buffer and across restarts.
    let store: Store?
    private let logger: Logger

    /// The devices `blegateway_characteristic_values_total` names one by one.
    static let countedDevices = 256

    /// The most stored events read at once by a stream catching up.
    static let storePageSize = 512

    /// A log that keeps the last `capacity` events for streams that resume,
    /// and with `store` every event in the store's log too.
    public init(capacity: Int = 4096, store: Store? = nil, logger: Logger = Logger(label: "blegateway.events")) {
        let first = store?.nextEventID ?? 1
        self.store = store
        self.logger = logger
        state = Mutex(State(nextID: first, buffer: ReplayBuffer(capacity: capacity, startingAfter: first - 1)))
    }

    /// Publishes an event whose data is `data`, any text (each of its lines
    /// becomes a `data:` line), evaluated only if a stream takes the event.
    @discardableResult
    public func publish(type: String, device: String? = nil, data: @autoclosure @escaping @Sendable () -> String) -> UInt64 {
        publish(type: type, device: device, body: .text(data))
    }

    /// Publishes an event whose data is `json`, evaluated only if a stream
    /// takes the event.
    @discardableResult
    func publish(type: String, device: String? = nil, json: @autoclosure @escaping @Sendable () -> JSON) -> UInt64 {
        publish(type: type, device: device, body: .json(json))
    }

    private func publish(type: String, device: String?, body: Entry.Body) -> UInt64 {
        state.withLock { state in
            // The store hands out ids in call order; asking it under this
            // lock keeps the buffer in id order.
            let id = store?.append(type: type, device: device, data: Self.storedData(body)) ?? state.nextID
            state.nextID = id + 1
            var entry = Entry(id: id, type: type, device: device, body: body)
            state.count(type, device: device)
            for subscriber in state.subscribers.values where subscriber.filter.matches(entry) {
                subscriber.writer.write(entry.encodedFrame())
            }
            state.buffer.append(entry)
            return id
        }
    }

    /// Reserves an id for an event sent to one stream only (such as a scan
    /// session's results), so that ids stay unique and increasing across the
    /// gateway.
    public func nextID() -> UInt64 {
        state.withLock { state in
            let id = store?.reserveEventID() ?? state.nextID
            state.nextID = id + 1
            return id
        }
    }

    /// The event's data as the store keeps it (the `data:` text), made on
    /// the store's thread when its batch is committed.
    private static func storedData(_ body: Entry.Body) -> @Sendable () -> [UInt8] {
        switch body {
        case .json(let json):
            return {
                var bytes: [UInt8] = []
                json().write(to: &bytes)
                return bytes
            }
        case .text(let text): return { Array(text().utf8) }
        case .frame: return { [] }
        }
    }

    /// A subscriber id for `subscribe` and `unsubscribe`, handed out first so
    /// that a stream's end handler can name its subscription.
    public func makeSubscriberID() -> UInt64 {
        state.withLock { state in
            defer { state.nextSubscriber += 1 }
            return state.nextSubscriber
        }
    }

    /// Starts delivering matching events to `writer`. With `lastEventID`,
    /// first replays the buffered matching events after it, pulled as the
    /// client reads; where events it asks for are no longer kept, a
    /// `replay-gap` event says so. The first batch is written before this
    /// returns, so a short replay is complete by then.
    public func subscribe(
        _ writer: StreamWriter, id token: UInt64, filter: EventFilter, after lastEventID: UInt64? = nil
    ) {
        guard let lastEventID else {
            state.withLock { $0.subscribers[token] = Subscriber(filter: filter, writer: writer) }
            return
        }
        state.withLock { state in
            var position = lastEventID
            // An id this log never gave (one from before the gateway
            // restarted): what the client missed is unknown, so it gets the
            // gap and everything kept.
            if lastEventID >= state.nextID {
                let oldest = state.buffer.oldestID ?? state.nextID
                writer.write(Self.gap(after: lastEventID, oldestAvailable: oldest))
                position = oldest - 1
            }
            state.replays[token] = Replay(filter: filter, position: position)
        }
        // The first batch now, so a short replay from the buffer is whole
        // on return; one that starts in the store is read by the refills.
        if needsStore(token) || replay(token, to: writer, budget: writer.refillBudget) {
            writer.pull { [self] writer, budget in
                needsStore(token) ? await replayFromStore(token, to: writer, budget: budget) : replay(token, to: writer, budget: budget)
            }
        }
    }

    /// Whether the stream `token` is catching up on events the buffer no
    /// longer (or never) held, which only the store has.
    private func needsStore(_ token: UInt64) -> Bool {
        guard store != nil else { return false }
        return state.withLock { state in
            guard let replay = state.replays[token] else { return false }
            return replay.position < state.buffer.evictedThrough
        }
    }

    /// The `replay-gap` event: the events after `lastEventID` up to
    /// `oldestAvailable` are no longer kept. It has no id, so the client's
    /// last event id stays the last event it really received.
    private static func gap(after lastEventID: UInt64, oldestAvailable: UInt64) -> [UInt8] {
        JSON.object([
            ("last_event_id", .int(Int(clamping: lastEventID))), ("oldest_available", .int(Int(clamping: oldestAvailable))),
        ]).eventFrame(id: nil, event: "replay-gap")
    }

    /// Writes the next batch of a stream's replay, about `budget` bytes.
    /// When the batch reaches the newest event the stream becomes a live
    /// subscriber in the same critical section. True while more is left.
    private func replay(_ token: UInt64, to writer: StreamWriter, budget: Int) -> Bool {
        state.withLock { state in
            // Gone if the stream ended meanwhile (`unsubscribe`).
            guard let replay = state.replays[token] else { return false }
            let page = state.buffer.page(after: replay.position, filter: replay.filter, budget: budget)
            if let oldest = page.oldestAvailable {
                writer.write(Self.gap(after: replay.position, oldestAvailable: oldest))
            }
            for frame in page.frames {
                guard writer.write(frame) else {
                    state.replays[token] = nil
                    return false
                }
            }
            guard page.reachedNewest else {
                state.replays[token]?.position = page.position
                return true
            }
            state.replays[token] = nil
            state.subscribers[token] = Subscriber(filter: replay.filter, writer: writer)
            return false
        }
    }

    /// Writes the next batch of a stream's replay from the store, about
    /// `budget` bytes, up to the first event the buffer holds. Ids handed
    /// out whose events the store never got (a full disk, a crash) are a
    /// `replay-gap`, as pruned ones are. True while more is left (from the
    /// store or the buffer).
    private func replayFromStore(_ token: UInt64, to writer: StreamWriter, budget: Int) async -> Bool {
        guard let store else { return false }
        let start = state.withLock { state -> (replay: Replay, boundary: UInt64)? in
            state.replays[token].map { ($0, state.buffer.evictedThrough) }
        }
        guard let (replay, boundary) = start else { return false }
        var position = replay.position
        var frames: [[UInt8]] = []
        do {
            // Events pushed out of the buffer may still wait for their batch.
            try await store.waitUntilCommitted(boundary)
        } catch {
            logger.debug("replaying from the store: \(error.message)")
        }
        do {
            if let oldest = store.eventLogSummary.oldestID, position + 1 < oldest {
                frames.append(Self.gap(after: position, oldestAvailable: oldest))
                position = min(oldest - 1, boundary)
            }
            let events = try await store.events(after: position, limit: Self.storePageSize)
            var missing = try await store.missingEvents(after: position, through: boundary)[...]
            // Gaps up to `id`: events the buffer holds (after `boundary`)
            // are not missing.
            func gaps(before id: UInt64) {
                while let gap = missing.first, gap.lowerBound < id {
                    missing.removeFirst()
                    let end = min(gap.upperBound, boundary)
                    guard end > position else { continue }
                    frames.append(Self.gap(after: position, oldestAvailable: end + 1))
                    position = end
                }
            }
            var bytes = 0
            var exhausted = events.count < Self.storePageSize
            for event in events {
                guard event.id <= boundary else {
                    exhausted = true
                    break
                }
                gaps(before: event.id)
                if replay.filter.matches(type: event.type, device: event.device) {
                    let frame = ServerSentEvent(
                        id: String(event.id), event: event.type, data: String(decoding: event.data, as: UTF8.self)
                    ).encoded
                    if bytes > 0, bytes + frame.count > budget {
                        exhausted = false
                        break
                    }
                    frames.append(frame)
                    bytes += frame.count
                }
                position = event.id
            }
            // What the store does not hold up to the boundary (ids reserved
            // for one stream's events) has nothing to replay.
            if exhausted {
                gaps(before: boundary + 1)
                position = max(position, boundary)
            }
        } catch {
            logger.error("the event log cannot be read to replay: \(error.message)")
            frames.append(Self.gap(after: position, oldestAvailable: boundary + 1))
            position = boundary
        }
        for frame in frames {
            guard writer.write(frame) else {
                unsubscribe(token)
                return false
            }
        }
        return state.withLock { state in
            guard state.replays[token] != nil else { return false }
            state.replays[token]?.position = position
            return true
        }
    }

    /// Stops delivering to the stream `token`, live or catching up.
    public func unsubscribe(_ token: UInt64) {
        state.withLock { state in
            state.subscribers[token] = nil
            state.replays[token] = nil
        }
    }

    /// Open streams, live or catching up (for /health and tests).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count + $0.replays.count } }
}
