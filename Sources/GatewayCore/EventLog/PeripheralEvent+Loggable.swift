import BlueZ

/// What centrals do with the gateway's applications, as the peripheral
/// role's event log (`GatewayCore.peripheralLog`) holds it.
extension PeripheralEvent: LoggableEvent {
    /// The names of the event types, as filters take them.
    public static let types: Set<String> = [
        "read", "written", "request", "request-expired", "subscribed", "unsubscribed", "central-connected", "central-disconnected",
        "reregistered",
    ]

    public var type: String {
        switch self {
        case .read: "read"
        case .written: "written"
        case .request: "request"
        case .requestExpired: "request-expired"
        case .subscribed: "subscribed"
        case .unsubscribed: "unsubscribed"
        case .centralSeen: "central-connected"
        case .centralGone: "central-disconnected"
        case .reregistered: "reregistered"
        }
    }

    /// None: the peripheral's streams filter by type only.
    public var device: String? { nil }
}
