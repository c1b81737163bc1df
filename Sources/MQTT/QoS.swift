/// An MQTT quality of service level.
public enum QoS: Int, Sendable, Hashable, CaseIterable {
    /// At most once: fire and forget. Lost when the connection is down.
    case atMostOnce = 0
    /// At least once: acknowledged by the broker (PUBACK); kept and sent again
    /// until it is.
    case atLeastOnce = 1
    /// Exactly once (the four-step PUBREC/PUBREL/PUBCOMP exchange).
    case exactlyOnce = 2
}
