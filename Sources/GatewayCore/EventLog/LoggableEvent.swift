/// An event an `EventLog` can hold: what filters, counters and the store
/// know it by. The log asks these once, when the event is published.
public protocol LoggableEvent: Sendable {
    /// The event type, such as `characteristic-value`.
    var type: String { get }
    /// The device the event is about (canonical address), if any.
    var device: String? { get }
}
