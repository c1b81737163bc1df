import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A central event as the gateway publishes it on `GET /v1/events`.
///
/// Its JSON is built only if a stream takes the event, live or replayed:
/// most events are never streamed (a characteristic value follows every
/// read, and most gateways have no `/v1/events` client), so building them
/// up front would tax every read and notification for nothing.
struct GatewayEvent: Sendable {
    let type: String
    let device: String?
    let data: @Sendable () -> JSON

    /// The type of a value notified, indicated or read.
    static let characteristicValue = "characteristic-value"

    /// The names of the event types, as `?type=` accepts them.
    static let types: Set<String> = Set([
        "adapter-state", "adapter-updated", "device-discovered", "device-updated", "device-lost",
        "device-connected", "device-disconnected", "services-resolved", characteristicValue, "bluez-state",
        "reconnecting", "kept-connected", "given-up",
    ]).union(Gateway.pairingEventTypes)

    init(_ event: CentralEvent) {
        let now = Date()
        switch event {
        case .adapterState(let adapter, let state):
            self.init("adapter-state", nil, now) { [("adapter", .string(adapter)), ("state", .string(state.rawValue))] }
        case .adapterUpdated(let adapter):
            self.init("adapter-updated", nil, now) {
                [("adapter", .string(adapter.id)), ("state", .string(adapter.state.rawValue)), ("details", ModelJSON.adapter(adapter, slots: nil))]
            }
        case .deviceDiscovered(let device): self.init(device: device, type: "device-discovered", now)
        case .deviceUpdated(let device): self.init(device: device, type: "device-updated", now)
        case .deviceLost(let device): self.init(device: device, type: "device-lost", now)
        case .connected(let device): self.init(device: device, type: "device-connected", now)
        case .servicesResolved(let device): self.init(device: device, type: "services-resolved", now)
        case .disconnected(let device, let reason):
            self.init(device: device, type: "device-disconnected", now, extra: reason.map { [("reason", .string($0))] } ?? [])
        case .characteristicValue(let value):
            self.init(Self.characteristicValue, value.device.description, value.timestamp) {
                ModelJSON.characteristicValue(value, encoding: .hex)
            }
        case .availability(let availability):
            self.init("bluez-state", nil, now) {
                [("state", .string(availability.name)), ("detail", .string(availability.detail))]
            }
        }
    }

    /// A step of keeping a device connected.
    init(_ event: ConnectionKeeper.Event) {
        let now = Date()
        switch event {
        case .reconnecting(let adapter, let address, let attempt, let reason, let delay):
            self.init("reconnecting", address.description, now) {
                [
                    ("adapter", .string(adapter)), ("address", .string(address.description)), ("attempt", .int(attempt)),
                    ("reason", .string(reason)), ("delay_ms", .int(delay.milliseconds)),
                ]
            }
        case .connected(let adapter, let address, let attempts):
            self.init("kept-connected", address.description, now) {
                [("adapter", .string(adapter)), ("address", .string(address.description)), ("attempts", .int(attempts))]
            }
        case .givenUp(let adapter, let address, let attempts, let reason):
            self.init("given-up", address.description, now) {
                [
                    ("adapter", .string(adapter)), ("address", .string(address.description)), ("attempts", .int(attempts)),
                    ("reason", .string(reason)),
                ]
            }
        }
    }

    private init(_ type: String, _ device: String?, _ date: Date, _ members: @escaping @Sendable () -> [(String, JSON)]) {
        self.type = type
        self.device = device
        self.data = { .object([("type", .string(type)), ("timestamp", ModelJSON.timestamp(date))] + members()) }
    }

    private init(device: Device, type: String, _ date: Date, extra: [(String, JSON)] = []) {
        self.init(type, device.address.description, date) {
            [("adapter", .string(device.adapter)), ("address", .string(device.address.description))] + extra
                + [("device", ModelJSON.device(device, encoding: .hex))]
        }
    }

    func publish(to log: EventLog) {
        log.publish(type: type, device: device, json: data())
    }
}
