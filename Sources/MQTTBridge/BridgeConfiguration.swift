import MQTT

/// What the bridge publishes where.
public struct BridgeConfiguration: Sendable {
    /// This gateway's name in topics: `<topicPrefix>/<gatewayID>/…`. One MQTT
    /// topic level: no `/`, `+`, `#`.
    public var gatewayID: String
    /// The first topic level (`blegateway`).
    public var topicPrefix: String
    /// A device's advertisements are published at most this often (the
    /// latest one wins); scans report a device many times a second.
    public var advertisementInterval: Duration
    /// The QoS of characteristic values (notifications and reads). QoS 0 by
    /// default: a stream of readings where the next replaces a lost one.
    public var valueQoS: QoS

    public init(
        gatewayID: String, topicPrefix: String = "blegateway", advertisementInterval: Duration = .seconds(1),
        valueQoS: QoS = .atMostOnce
    ) {
        self.gatewayID = gatewayID
        self.topicPrefix = topicPrefix
        self.advertisementInterval = advertisementInterval
        self.valueQoS = valueQoS
    }

    /// `<topicPrefix>/<gatewayID>`.
    public var base: String { "\(topicPrefix)/\(gatewayID)" }
}
