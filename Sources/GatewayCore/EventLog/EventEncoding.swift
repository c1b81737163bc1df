#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PersistedState

/// How a door writes a log's events as bytes (GatewayAPI: SSE frames and
/// their JSON). The log keeps the encoded form of an event once a
/// subscriber asked for it, writes what it stores with it, and serves
/// streams catching up (from its buffer or its store) in it: the store
/// holds events only in this form.
public protocol EventEncoding<Event>: Sendable {
    associatedtype Event: LoggableEvent

    /// The bytes a stream writes for `event`, published with `id` at `time`.
    func frame(of event: Event, id: UInt64, time: Date) -> [UInt8]

    /// The data the store keeps for `event` (made on the store's thread,
    /// when its batch is committed); `frame(of:)` of the stored event must
    /// give what `frame(of:id:time:)` gives.
    func storedData(of event: Event, time: Date) -> [UInt8]

    /// The bytes a stream writes for an event the store kept.
    func frame(of stored: StoredEvent) -> [UInt8]

    /// The bytes that tell a stream catching up that the events after
    /// `position` up to `oldestAvailable` are no longer kept.
    func gap(after position: UInt64, oldestAvailable: UInt64) -> [UInt8]
}
