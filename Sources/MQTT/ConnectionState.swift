/// Where the client's connection to the broker stands.
public enum ConnectionState: Sendable, Hashable {
    /// Not started yet.
    case idle
    /// A connection attempt is under way (first connect or a reconnect).
    case connecting
    /// The broker accepted the connection (CONNACK with success).
    case connected
    /// The connection failed or was lost; `reason` says why (libmosquitto's
    /// error or the broker's reason code). The client tries again after its
    /// backoff delay.
    case disconnected(reason: String)
    /// `stop()` ended the client; it does not reconnect.
    case stopped

    /// True for `.connected`.
    public var isConnected: Bool { self == .connected }
}
