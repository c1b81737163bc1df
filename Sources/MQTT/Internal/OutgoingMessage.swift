/// A message on its way out, as the client keeps it in its outbox.
struct OutgoingMessage: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: QoS
    var retain: Bool
    var properties: MessageProperties
}
