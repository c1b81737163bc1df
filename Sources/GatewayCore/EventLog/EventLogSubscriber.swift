/// What receives a log's events as they are published: an SSE stream
/// (GatewayAPI writes each event's frame), or any other door that wants
/// the typed events.
///
/// `receive` runs on the thread that publishes (for a characteristic
/// value, the one delivering it from D-Bus), under the log's lock, so that
/// every subscriber sees the events in id order: it must not wait, and
/// must not call the log.
public protocol EventLogSubscriber<Event>: Sendable {
    associatedtype Event: LoggableEvent

    /// A new event the subscriber's filter takes. `encoded()` gives its
    /// bytes, made once for all subscribers.
    func receive(_ event: inout PublishedEvent<Event>)
}
