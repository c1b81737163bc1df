import DequeModule
import HTTPServer
import Synchronization

/// The gateway's event sequence: every event gets the next id, is kept in a
/// bounded replay buffer, and written to every open stream whose filter
/// wants it. An event is encoded as an SSE frame once, when the first stream
/// takes it: one that no stream ever takes costs no encoding.
///
/// Publishing and subscribing share one lock, so a stream that resumes from
/// `Last-Event-ID` gets the replayed events and then the live ones with no
/// gap and no duplicate, in id order.
public final class EventLog: Sendable {
    /// One published event.
    public struct Entry: Sendable {
        public let id: UInt64
        public let type: String
        /// The device the event is about (canonical address), if any.
        public let device: String?
        /// The attribute the event is about (`service/characteristic` path
        /// key), if any.
        public let attribute: String?
        /// The event's JSON (one line), until it is encoded: the buffer
        /// keeps one form of an event, not both.
        var data: (@Sendable () -> String)?
        /// The encoded SSE frame (`id:`, `event:`, `data:` lines), once a
        /// stream has taken the event.
        var frame: [UInt8]?

        /// The SSE frame, encoded now if no stream took the event before.
        mutating func encodedFrame() -> [UInt8] {
            if let frame { return frame }
            let encoded = ServerSentEvent(id: String(id), event: type, data: data?() ?? "{}").encoded
            frame = encoded
            data = nil
            return encoded
        }
    }

    struct Subscriber {
        let filter: EventFilter
        let writer: StreamWriter
    }

    struct State {
        var nextID: UInt64 = 1
        var buffer = Deque<Entry>()
        var subscribers: [UInt64: Subscriber] = [:]
        var nextSubscriber: UInt64 = 1
    }

    /// How many past events are kept for `Last-Event-ID`.
    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// Publishes an event: `data` is its JSON (one line), evaluated only if
    /// a stream takes the event.
    @discardableResult
    public func publish(
        type: String, device: String? = nil, attribute: String? = nil, data: @autoclosure @escaping @Sendable () -> String
    ) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            var entry = Entry(id: id, type: type, device: device, attribute: attribute, data: data)
            for subscriber in state.subscribers.values where subscriber.filter.matches(entry) {
                subscriber.writer.write(entry.encodedFrame())
            }
            if state.buffer.count == capacity { state.buffer.removeFirst() }
            state.buffer.append(entry)
            return id
        }
    }

    /// Reserves an id for an event sent to one stream only (such as a scan
    /// session's results), so that ids stay unique and increasing across the
    /// gateway.
    public func nextID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
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
    /// first replays the buffered matching events after it; if some were
    /// already dropped from the buffer, a `replay-gap` event says so first.
    public func subscribe(
        _ writer: StreamWriter, id token: UInt64, filter: EventFilter, after lastEventID: UInt64? = nil
    ) {
        state.withLock { state in
            if let lastEventID {
                if let oldest = state.buffer.first?.id, lastEventID + 1 < oldest {
                    let gap = #"{"last_event_id":\#(lastEventID),"oldest_available":\#(oldest)}"#
                    writer.write(ServerSentEvent(event: "replay-gap", data: gap).encoded)
                }
                for index in state.buffer.indices
                where state.buffer[index].id > lastEventID && filter.matches(state.buffer[index]) {
                    writer.write(state.buffer[index].encodedFrame())
                }
            }
            state.subscribers[token] = Subscriber(filter: filter, writer: writer)
        }
    }

    public func unsubscribe(_ token: UInt64) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: token) }
    }

    /// Open streams (for /health and tests).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// The id the next event will get.
    public var upcomingID: UInt64 { state.withLock { $0.nextID } }
}

/// Which events a stream wants.
public struct EventFilter: Sendable, Hashable {
    /// Event types; nil means all.
    public var types: Set<String>?
    /// Only events about this device (canonical address); nil means any.
    public var device: String?
    /// Only events about this attribute; nil means any.
    public var attribute: String?

    public init(types: Set<String>? = nil, device: String? = nil, attribute: String? = nil) {
        self.types = types
        self.device = device
        self.attribute = attribute
    }

    func matches(_ entry: EventLog.Entry) -> Bool {
        if let types, !types.contains(entry.type) { return false }
        if let device, entry.device != device { return false }
        if let attribute, entry.attribute != attribute { return false }
        return true
    }
}
