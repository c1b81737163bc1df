/// Counters of one client since it was created.
public struct Statistics: Sendable, Hashable {
    /// Messages handed to libmosquitto (QoS 0 sent, QoS 1/2 accepted).
    public var published = 0
    /// QoS 1/2 messages the broker acknowledged with success.
    public var acknowledged = 0
    /// QoS 1/2 messages the broker acknowledged with a failure reason code
    /// (MQTT 5, for example not authorized).
    public var rejected = 0
    /// QoS 1/2 messages handed to libmosquitto and not acknowledged yet.
    public var inFlight = 0
    /// QoS 1/2 messages waiting in the outbox.
    public var queued = 0
    /// QoS 1/2 messages dropped from a full outbox (oldest first).
    public var droppedFromOutbox = 0
    /// QoS 0 messages published while the client was not connected.
    public var droppedWhileDisconnected = 0
    /// Messages received on subscriptions.
    public var received = 0
    /// Successful connections (the first one and every reconnect).
    public var connections = 0

    public init() {}
}
