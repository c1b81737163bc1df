import BlueZ

/// An event of the gateway's event log (`GatewayCore.log`): what the
/// central, the keeper and pairing do, as the core publishes it. Each door
/// writes it in its own terms (GatewayAPI: the JSON of `GET /v1/events`).
public enum LoggedEvent: LoggableEvent {
    case central(CentralEvent)
    /// A step of keeping a device connected (one the keeper announces).
    case keeping(ConnectionKeeper.Event)
    case pairing(PairingEvent)

    /// The type of a value notified, indicated or read.
    public static let characteristicValue = "characteristic-value"

    /// The names of the event types, as filters take them.
    public static let types: Set<String> = Set([
        "adapter-state", "adapter-updated", "device-discovered", "device-updated", "device-lost",
        "device-connected", "device-disconnected", "services-resolved", characteristicValue, "bluez-state",
        "reconnecting", "kept-connected", "given-up",
    ]).union(PairingEvent.types)

    public var type: String {
        switch self {
        case .central(let event):
            switch event {
            case .adapterState: "adapter-state"
            case .adapterUpdated: "adapter-updated"
            case .deviceDiscovered: "device-discovered"
            case .deviceUpdated: "device-updated"
            case .deviceLost: "device-lost"
            case .connected: "device-connected"
            case .servicesResolved: "services-resolved"
            case .disconnected: "device-disconnected"
            case .characteristicValue: Self.characteristicValue
            case .availability: "bluez-state"
            }
        case .keeping(let step):
            switch step {
            case .reconnecting: "reconnecting"
            case .connected: "kept-connected"
            case .givenUp: "given-up"
            }
        case .pairing(let event): event.type
        }
    }

    public var device: String? {
        switch self {
        case .central(let event):
            switch event {
            case .adapterState, .adapterUpdated, .availability: nil
            case .deviceDiscovered(let device), .deviceUpdated(let device), .deviceLost(let device), .connected(let device),
                .servicesResolved(let device), .disconnected(let device, _):
                device.address.description
            case .characteristicValue(let value): value.device.description
            }
        case .keeping(let step):
            switch step {
            case .reconnecting(_, let address, _, _, _), .connected(_, let address, _), .givenUp(_, let address, _, _):
                address.description
            }
        case .pairing(let event): event.device.description
        }
    }
}
