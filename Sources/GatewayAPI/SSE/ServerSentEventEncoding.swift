import GatewayCore
import HTTPServer
import PersistedState

/// An event log's encoding as SSE frames: what every one writes alike, a
/// stored event (its data is the text the store kept) and the
/// `replay-gap` event.
protocol ServerSentEventEncoding: EventEncoding {}

extension ServerSentEventEncoding {
    func frame(of stored: StoredEvent) -> [UInt8] {
        ServerSentEvent(id: String(stored.id), event: stored.type, data: String(decoding: stored.data, as: UTF8.self)).encoded
    }

    /// The `replay-gap` event: the events after `position` up to
    /// `oldestAvailable` are no longer kept. It has no id, so the client's
    /// last event id stays the last event it really received.
    func gap(after position: UInt64, oldestAvailable: UInt64) -> [UInt8] {
        JSON.object([
            ("last_event_id", .int(Int(clamping: position))), ("oldest_available", .int(Int(clamping: oldestAvailable))),
        ]).eventFrame(id: nil, event: "replay-gap")
    }
}
