/// A Last Will: the message the broker publishes for the client when the
/// client goes away without a clean DISCONNECT (its process killed, its
/// network gone past the keepalive). A clean `Client.stop()` discards it.
public struct Will: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: QoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: QoS = .atLeastOnce, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
