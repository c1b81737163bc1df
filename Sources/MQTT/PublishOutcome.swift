/// What `Client.publish` did with a message.
public enum PublishOutcome: Sendable, Hashable {
    /// Handed to libmosquitto: QoS 0 is on its way; QoS 1 and 2 are kept by
    /// libmosquitto (and sent again after a reconnect) until acknowledged.
    case sent
    /// QoS 1 or 2 held in the client's outbox: too many messages are waiting
    /// for their acknowledgement (typically because the broker is away). It
    /// goes out as acknowledgements come in.
    case queued
    /// Queued, and the outbox was full, so its oldest message was dropped
    /// (counted in `Statistics.droppedFromOutbox`).
    case queuedDroppingOldest
    /// QoS 0 while not connected: dropped (counted in
    /// `Statistics.droppedWhileDisconnected`).
    case dropped
}
