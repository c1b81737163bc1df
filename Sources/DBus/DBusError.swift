/// An error from D-Bus: an error reply from a peer, or a local condition
/// (timeout, disconnection, invalid input), always with a D-Bus error name.
///
/// The name is kept exactly as the peer sent it (`org.bluez.Error.Failed`),
/// so layers above can map it; the message is the peer's human text.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: ErrorName
    public var message: String

    public init(_ name: ErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name.rawValue): \(message)" }

    /// No reply arrived before the call's timeout.
    public var isNoReply: Bool { name == .noReply || name == .timeout }
    /// The destination name has no owner (the service is not running).
    public var isServiceUnknown: Bool { name == .serviceUnknown || name == .nameHasNoOwner }
    /// The destination has no object at the path.
    public var isUnknownObject: Bool { name == .unknownObject }
    /// The object has no such method (or interface).
    public var isUnknownMethod: Bool { name == .unknownMethod || name == .unknownInterface }
    /// The bus or the peer refused the call by policy.
    public var isAccessDenied: Bool { name == .accessDenied }
    /// The connection to the bus is gone.
    public var isDisconnected: Bool { name == .disconnected }
}
