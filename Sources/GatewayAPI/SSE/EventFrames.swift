import HTTPServer
import PersistedState

/// The SSE frames every event log's encoding writes alike.
enum EventFrames {
    /// A stored event's frame: its data is the text the store kept.
    static func frame(of stored: StoredEvent) -> [UInt8] {
        ServerSentEvent(id: String(stored.id), event: stored.type, data: String(decoding: stored.data, as: UTF8.self)).encoded
    }

    /// The `replay-gap` event: the events after `position` up to
    /// `oldestAvailable` are no longer kept. It has no id, so the client's
    /// last event id stays the last event it really received.
    static func gap(after position: UInt64, oldestAvailable: UInt64) -> [UInt8] {
        JSON.object([
            ("last_event_id", .int(Int(clamping: position))), ("oldest_available", .int(Int(clamping: oldestAvailable))),
        ]).eventFrame(id: nil, event: "replay-gap")
    }
}
