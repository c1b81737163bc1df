import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore

/// The JSON of an event of the gateway's log, as `GET /v1/events` carries
/// it (and the MQTT bridge's `BridgedEvent`).
///
/// Built only when a stream takes the event, live or replayed: most events
/// are never streamed (a characteristic value follows every read, and most
/// gateways have no `/v1/events` client).
enum GatewayEvent {
    /// `event`'s JSON, stamped `date` (a value: the time it arrived).
    static func json(_ event: LoggedEvent, at date: Date) -> JSON {
        let type = event.type
        switch event {
        case .central(let central): return json(central, type: type, at: date)
        case .keeping(let step): return object(type, date, members(step))
        case .pairing(let pairing): return PairingJSON.event(pairing, at: date)
        }
    }

    private static func json(_ event: CentralEvent, type: String, at date: Date) -> JSON {
        switch event {
        case .adapterState(let adapter, let state):
            object(type, date, [("adapter", .string(adapter)), ("state", .string(state.rawValue))])
        case .adapterUpdated(let adapter):
            object(
                type, date,
                [("adapter", .string(adapter.id)), ("state", .string(adapter.state.rawValue)), ("details", ModelJSON.adapter(adapter, slots: nil))])
        case .deviceDiscovered(let device), .deviceUpdated(let device), .deviceLost(let device), .connected(let device),
            .servicesResolved(let device):
            object(type, date, members(device))
        case .disconnected(let device, let reason):
            object(type, date, members(device, extra: reason.map { [("reason", .string($0))] } ?? []))
        case .characteristicValue(let value):
            object(type, value.timestamp, ModelJSON.characteristicValue(value, encoding: .hex))
        case .availability(let availability):
            object(type, date, [("state", .string(availability.name)), ("detail", .string(availability.detail))])
        }
    }

    /// A step of keeping a device connected.
    private static func members(_ step: ConnectionKeeper.Event) -> [(String, JSON)] {
        switch step {
        case .reconnecting(let adapter, let address, let attempt, let reason, let delay):
            [
                ("adapter", .string(adapter)), ("address", .string(address.description)), ("attempt", .int(attempt)),
                ("reason", .string(reason)), ("delay_ms", .int(delay.milliseconds)),
            ]
        case .connected(let adapter, let address, let attempts):
            [("adapter", .string(adapter)), ("address", .string(address.description)), ("attempts", .int(attempts))]
        case .givenUp(let adapter, let address, let attempts, let reason):
            [
                ("adapter", .string(adapter)), ("address", .string(address.description)), ("attempts", .int(attempts)),
                ("reason", .string(reason)),
            ]
        }
    }

    private static func members(_ device: Device, extra: [(String, JSON)] = []) -> [(String, JSON)] {
        [("adapter", .string(device.adapter)), ("address", .string(device.address.description))] + extra
            + [("device", ModelJSON.device(device, encoding: .hex))]
    }

    private static func object(_ type: String, _ date: Date, _ members: [(String, JSON)]) -> JSON {
        .object([("type", .string(type)), ("timestamp", ModelJSON.timestamp(date))] + members)
    }
}
