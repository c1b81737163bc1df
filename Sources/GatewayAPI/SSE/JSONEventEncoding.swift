import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore

/// An event log's SSE encoding whose events' data is their JSON, which the
/// store keeps: `gateway` for `GET /v1/events` (`GatewayEvent`),
/// `peripheral` for `GET /v1/peripheral/events` (`PeripheralJSON`).
struct JSONEventEncoding<Event: LoggableEvent>: ServerSentEventEncoding {
    /// An event's JSON, published at a time.
    let json: @Sendable (Event, Date) -> JSON

    func frame(of event: Event, id: UInt64, time: Date) -> [UInt8] {
        json(event, time).eventFrame(id: id, event: event.type)
    }

    func storedData(of event: Event, time: Date) -> [UInt8] {
        var bytes: [UInt8] = []
        json(event, time).write(to: &bytes)
        return bytes
    }
}

extension JSONEventEncoding where Event == LoggedEvent {
    static var gateway: Self { Self { GatewayEvent.json($0, at: $1) } }
}

extension JSONEventEncoding where Event == PeripheralEvent {
    static var peripheral: Self { Self { PeripheralJSON.event($0, at: $1) } }
}
