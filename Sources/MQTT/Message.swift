/// A message received from the broker on one of the client's subscriptions.
public struct Message: Sendable, Hashable {
    /// The topic it was published to (never a filter).
    public var topic: String
    public var payload: [UInt8]
    /// The QoS it was delivered with (the lower of the publisher's and the
    /// subscription's).
    public var qos: QoS
    /// True when the broker delivered a retained copy (a message published
    /// before the subscription was made).
    public var retain: Bool
    /// Its MQTT 5 properties (empty under MQTT 3.1.1).
    public var properties: MessageProperties

    public init(
        topic: String, payload: [UInt8], qos: QoS = .atMostOnce, retain: Bool = false,
        properties: MessageProperties = MessageProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    /// The payload read as UTF-8 (invalid sequences replaced).
    public var payloadText: String { String(decoding: payload, as: UTF8.self) }
}
