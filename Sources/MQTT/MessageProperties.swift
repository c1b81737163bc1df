/// The MQTT 5 properties of a published message that this module reads and
/// writes. Under MQTT 3.1.1 they are not sent, and received messages carry
/// none.
public struct MessageProperties: Sendable, Hashable {
    /// Where a request's answer is to be published (request/response).
    public var responseTopic: String?
    /// Opaque bytes a requester sets to match the answer to its request; the
    /// responder copies them into the answer.
    public var correlationData: [UInt8]?
    /// The payload's MIME type, such as `application/json`.
    public var contentType: String?
    /// Seconds after which the broker discards the message if it has not
    /// delivered it (it also lowers the remaining time on retained copies).
    public var messageExpiryInterval: UInt32?
    /// Application-defined name/value pairs, in order.
    public var userProperties: [UserProperty]

    public init(
        responseTopic: String? = nil, correlationData: [UInt8]? = nil, contentType: String? = nil,
        messageExpiryInterval: UInt32? = nil, userProperties: [UserProperty] = []
    ) {
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.contentType = contentType
        self.messageExpiryInterval = messageExpiryInterval
        self.userProperties = userProperties
    }

    /// True when no property is set.
    public var isEmpty: Bool {
        responseTopic == nil && correlationData == nil && contentType == nil && messageExpiryInterval == nil
            && userProperties.isEmpty
    }
}
