#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An event as the log hands it to its live subscribers: its id, its time
/// and the typed event, with the log's encoding of it made at most once
/// for all of them (the first subscriber that writes bytes asks for it).
///
/// A value on stack, passed `inout` from subscriber to subscriber under
/// the log's lock: nothing is allocated for it, and the encoded form, if
/// made, is what the replay buffer then keeps.
public struct PublishedEvent<Event: LoggableEvent>: Sendable {
    public let id: UInt64
    public let time: Date
    public let event: Event
    /// `event.type` and `event.device`, asked once by the log.
    public let type: String
    public let device: String?
    let encoding: any EventEncoding<Event>
    /// The encoded form, once a subscriber asked for it.
    private(set) var frame: [UInt8]?

    init(id: UInt64, time: Date, event: Event, type: String, device: String?, encoding: any EventEncoding<Event>) {
        self.id = id
        self.time = time
        self.event = event
        self.type = type
        self.device = device
        self.encoding = encoding
    }

    /// The log's encoding of the event (an SSE frame in GatewayAPI), made
    /// now if no subscriber asked before.
    public mutating func encoded() -> [UInt8] {
        if let frame { return frame }
        let made = EventLog<Event>.trimmed(encoding.frame(of: event, id: id, time: time))
        frame = made
        return made
    }
}
