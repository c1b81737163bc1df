#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import PersistedState

/// The gateway's event log as `GET /v1/events` writes it: each event an
/// SSE frame whose data is its JSON (`GatewayEvent`), which the store
/// keeps.
struct GatewayEventEncoding: EventEncoding {
    func frame(of event: LoggedEvent, id: UInt64, time: Date) -> [UInt8] {
        GatewayEvent.json(event, at: time).eventFrame(id: id, event: event.type)
    }

    func storedData(of event: LoggedEvent, time: Date) -> [UInt8] {
        var bytes: [UInt8] = []
        GatewayEvent.json(event, at: time).write(to: &bytes)
        return bytes
    }

    func frame(of stored: StoredEvent) -> [UInt8] { EventFrames.frame(of: stored) }

    func gap(after position: UInt64, oldestAvailable: UInt64) -> [UInt8] {
        EventFrames.gap(after: position, oldestAvailable: oldestAvailable)
    }
}
