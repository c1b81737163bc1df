import CMosquitto

/// The MQTT protocol version spoken to the broker.
public enum ProtocolVersion: Sendable, Hashable {
    /// MQTT 3.1.1: no message properties (they are left out when publishing).
    case v311
    /// MQTT 5: properties (response topic, correlation data, user properties,
    /// content type, message expiry) and reason codes.
    case v5

    var rawValue: Int32 {
        switch self {
        case .v311: CMOSQ_PROTOCOL_V311
        case .v5: CMOSQ_PROTOCOL_V5
        }
    }
}
