import BlueZ
import Foundation

/// A central event as the gateway publishes it on `GET /v1/events`.
struct GatewayEvent {
    let type: String
    let device: String?
    let data: JSON

    /// The names of the event types, as `?type=` accepts them.
    static let types: Set<String> = [
        "adapter-state", "adapter-updated", "device-discovered", "device-updated", "device-lost",
        "device-connected", "device-disconnected", "services-resolved", "characteristic-value",
    ]

    init?(_ event: CentralEvent) {
        let now = ModelJSON.timestamp(Date())
        switch event {
        case .adapterState(let adapter, let state):
            self.init("adapter-state", nil, [("adapter", .string(adapter)), ("state", .string(state.rawValue))], now)
        case .adapterUpdated(let adapter):
            self.init(
                "adapter-updated", nil,
                [("adapter", .string(adapter.id)), ("state", .string(adapter.state.rawValue)), ("details", ModelJSON.adapter(adapter))],
                now)
        case .deviceDiscovered(let device): self.init(device: device, type: "device-discovered", now)
        case .deviceUpdated(let device): self.init(device: device, type: "device-updated", now)
        case .deviceLost(let device): self.init(device: device, type: "device-lost", now)
        case .connected(let device): self.init(device: device, type: "device-connected", now)
        case .servicesResolved(let device): self.init(device: device, type: "services-resolved", now)
        case .disconnected(let device, let reason):
            self.init(device: device, type: "device-disconnected", now, extra: reason.map { [("reason", .string($0))] } ?? [])
        case .characteristicValue(let value):
            var members: [(String, JSON)] = [
                ("adapter", .string(value.adapter)), ("address", .string(value.device.description)),
            ]
            if let service = value.service { members.append(("service", .string(service.uuidString))) }
            members.append(("characteristic", .string(value.characteristic.uuidString)))
            if let handle = value.handle { members.append(("handle", .int(Int(handle)))) }
            members += [("value", .string(ByteEncoding.hex(value.value))), ("encoding", .string("hex"))]
            self.init("characteristic-value", value.device.description, members, ModelJSON.timestamp(value.timestamp))
        }
    }

    private init(_ type: String, _ device: String?, _ members: [(String, JSON)], _ timestamp: JSON) {
        self.type = type
        self.device = device
        self.data = .object([("type", .string(type)), ("timestamp", timestamp)] + members)
    }

    private init(device: Device, type: String, _ timestamp: JSON, extra: [(String, JSON)] = []) {
        let deviceJSON = ModelJSON.device(device, encoding: .hex)
        self.init(
            type, device.address.description,
            [("adapter", .string(device.adapter)), ("address", .string(device.address.description))] + extra
                + [("device", deviceJSON)],
            timestamp)
    }

    func publish(to log: EventLog) {
        log.publish(type: type, device: device, data: data.text)
    }
}
