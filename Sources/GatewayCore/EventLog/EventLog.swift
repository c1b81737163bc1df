#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Metrics
import PersistedState
import Synchronization

/// The gateway's event sequence: every event gets the next id, is kept in a
/// bounded replay buffer, and handed (id, time, typed event) to every
/// subscriber whose filter wants it, on the publishing thread. An event is
/// encoded (`EventEncoding`: an SSE frame, for GatewayAPI's streams) once,
/// when the first subscriber asks for its bytes: one that no stream ever
/// takes costs no encoding.
///
/// A subscriber that resumes from `Last-Event-ID` catches up at the pace
/// its reader takes the events: it pulls the buffered events a batch at a
/// time (`ReplayingSubscriber.pull`), and in the step that finds nothing
/// left to replay it joins the live subscribers, under the same lock that
/// publishing takes, so it sees every event once, in id order, with no
/// gap. The buffer answers in `EventPage`s; a persistent store can answer
/// the same pages for ids older than the buffer holds, read in the
/// (asynchronous) refill before the replay reaches the buffer.
///
/// With a `Store`, every published event is also appended to the store's
/// event log (queued, committed in batches off this path) and takes its id
/// from the store's sequence, so ids go on increasing across restarts; a
/// stream resuming from an id older than the buffer holds, or from before a
/// restart, is served from the store until it reaches the buffer.
public final class EventLog<Event: LoggableEvent>: Sendable {
    struct Subscriber {
        let filter: EventFilter
        let target: any EventLogSubscriber<Event>
    }

    /// A subscriber still catching up: the id of the last past event it has
    /// been through (delivered, or skipped by its filter).
    struct Replay {
        let filter: EventFilter
        var position: UInt64
    }

    struct State {
        var nextID: UInt64 = 1
        var buffer: ReplayBuffer<Event>
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
            if type == LoggedEvent.characteristicValue, let device { countValue(from: device) }
        }

        private mutating func countValue(from device: String) {
            if let counter = valueCounters[device] { return counter.increment() }
            let label = valueCounters.count < EventLogLimits.countedDevices ? device : "other"
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
    /// How the events are written as bytes: for streams and for the store.
    let encoding: any EventEncoding<Event>
    private let logger: Logger

    /// A log that keeps the last `capacity` events for subscribers that
    /// resume, and with `store` every event in the store's log too (as
    /// `encoding` writes it).
    public init(
        capacity: Int = 4096, store: Store? = nil, encoding: any EventEncoding<Event>,
        logger: Logger = Logger(label: "blegateway.events")
    ) {
        let first = store?.nextEventID ?? 1
        self.store = store
        self.encoding = encoding
        self.logger = logger
        state = Mutex(State(nextID: first, buffer: ReplayBuffer(capacity: capacity, startingAfter: first - 1)))
    }

    /// Publishes `event`: gives it the next id, hands it to the subscribers
    /// whose filter takes it, on this thread, and keeps it for those that
    /// resume (and in the store). Nothing is encoded unless a subscriber
    /// asks.
    @discardableResult
    public func publish(_ event: Event) -> UInt64 {
        let type = event.type
        let device = event.device
        let time = Date()
        return state.withLock { state in
            // The store hands out ids in call order; asking it under this
            // lock keeps the buffer in id order. What it keeps is encoded on
            // its thread, when the batch is committed.
            let id =
                store?.append(type: type, device: device, timestamp: time) { [encoding] in encoding.storedData(of: event, time: time) }
                ?? state.nextID
            state.nextID = id + 1
            var published = PublishedEvent(id: id, time: time, event: event, type: type, device: device, encoding: encoding)
            state.count(type, device: device)
            for subscriber in state.subscribers.values where subscriber.filter.matches(type: type, device: device) {
                subscriber.target.receive(&published)
            }
            state.buffer.append(Entry(published))
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

    /// A subscriber id for `subscribe` and `unsubscribe`, handed out first so
    /// that a stream's end handler can name its subscription.
    public func makeSubscriberID() -> UInt64 {
        state.withLock { state in
            defer { state.nextSubscriber += 1 }
            return state.nextSubscriber
        }
    }

    /// Starts handing the events `filter` takes to `subscriber`, from the
    /// next one published.
    public func subscribe(_ subscriber: any EventLogSubscriber<Event>, id token: UInt64, filter: EventFilter) {
        state.withLock { $0.subscribers[token] = Subscriber(filter: filter, target: subscriber) }
    }

    /// Starts delivering matching events to `subscriber`. With
    /// `lastEventID`, first replays the buffered matching events after it,
    /// pulled as the reader takes them; where events it asks for are no
    /// longer kept, a gap (`EventEncoding.gap`) says so. The first batch is
    /// written before this returns, so a short replay is complete by then.
    public func subscribe(
        _ subscriber: any ReplayingSubscriber<Event>, id token: UInt64, filter: EventFilter, after lastEventID: UInt64?
    ) {
        guard let lastEventID else { return subscribe(subscriber, id: token, filter: filter) }
        state.withLock { state in
            var position = lastEventID
            // An id this log never gave (one from before the gateway
            // restarted): what the client missed is unknown, so it gets the
            // gap and everything kept.
            if lastEventID >= state.nextID {
                let oldest = state.buffer.oldestID ?? state.nextID
                _ = subscriber.replay(encoding.gap(after: lastEventID, oldestAvailable: oldest))
                position = oldest - 1
            }
            state.replays[token] = Replay(filter: filter, position: position)
        }
        // The first batch now, so a short replay from the buffer is whole
        // on return; one that starts in the store is read by the refills.
        if needsStore(token) || replay(token, to: subscriber, budget: subscriber.replayBudget) {
            subscriber.pull { [self] budget in
                needsStore(token)
                    ? await replayFromStore(token, to: subscriber, budget: budget) : replay(token, to: subscriber, budget: budget)
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

    /// Writes the next batch of a stream's replay, about `budget` bytes.
    /// When the batch reaches the newest event the stream becomes a live
    /// subscriber in the same critical section. True while more is left.
    private func replay(_ token: UInt64, to subscriber: any ReplayingSubscriber<Event>, budget: Int) -> Bool {
        state.withLock { state in
            // Gone if the stream ended meanwhile (`unsubscribe`).
            guard let replay = state.replays[token] else { return false }
            let page = state.buffer.page(after: replay.position, filter: replay.filter, budget: budget, encoding: encoding)
            if let oldest = page.oldestAvailable {
                _ = subscriber.replay(encoding.gap(after: replay.position, oldestAvailable: oldest))
            }
            for frame in page.frames {
                guard subscriber.replay(frame) else {
                    state.replays[token] = nil
                    return false
                }
            }
            guard page.reachedNewest else {
                state.replays[token]?.position = page.position
                return true
            }
            state.replays[token] = nil
            state.subscribers[token] = Subscriber(filter: replay.filter, target: subscriber)
            return false
        }
    }

    /// Writes the next batch of a stream's replay from the store, about
    /// `budget` bytes, up to the first event the buffer holds. Ids handed
    /// out whose events the store never got (a full disk, a crash) are a
    /// `replay-gap`, as pruned ones are. True while more is left (from the
    /// store or the buffer).
    private func replayFromStore(_ token: UInt64, to subscriber: any ReplayingSubscriber<Event>, budget: Int) async -> Bool {
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
                frames.append(encoding.gap(after: position, oldestAvailable: oldest))
                position = min(oldest - 1, boundary)
            }
            let events = try await store.events(after: position, limit: EventLogLimits.storePageSize)
            var missing = try await store.missingEvents(after: position, through: boundary)[...]
            // Gaps up to `id`: events the buffer holds (after `boundary`)
            // are not missing.
            func gaps(before id: UInt64) {
                while let gap = missing.first, gap.lowerBound < id {
                    missing.removeFirst()
                    let end = min(gap.upperBound, boundary)
                    guard end > position else { continue }
                    frames.append(encoding.gap(after: position, oldestAvailable: end + 1))
                    position = end
                }
            }
            var bytes = 0
            var exhausted = events.count < EventLogLimits.storePageSize
            for event in events {
                guard event.id <= boundary else {
                    exhausted = true
                    break
                }
                gaps(before: event.id)
                if replay.filter.matches(type: event.type, device: event.device) {
                    let frame = encoding.frame(of: event)
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
            frames.append(encoding.gap(after: position, oldestAvailable: boundary + 1))
            position = boundary
        }
        for frame in frames {
            guard subscriber.replay(frame) else {
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

    /// Open subscribers, live or catching up (for /health and tests).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count + $0.replays.count } }
}
