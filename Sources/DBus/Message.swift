/// A D-Bus message as Swift values: header fields and a decoded body.
///
/// Messages are plain values, safe to pass between threads and tasks; the
/// libdbus message objects they come from and go to never leave the
/// connection's loop thread.
public struct Message: Sendable {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    /// The serial the sender gave the message (0 until sent).
    public var serial: UInt32 = 0
    /// For replies and errors: the serial of the call answered.
    public var replySerial: UInt32?
    /// The unique name of the sending connection (set by the bus).
    public var sender: BusName?
    public var destination: BusName?
    public var path: ObjectPath?
    public var interface: InterfaceName?
    public var member: MemberName?
    public var errorName: ErrorName?
    public var body: [Value]
    /// For method calls: the caller does not want a reply.
    public var noReplyExpected = false

    public init(kind: Kind, body: [Value] = []) {
        self.kind = kind
        self.body = body
    }

    /// The signature of the body.
    public var signature: Signature { body.signature }

    /// A method call to `destination`.
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName, body: [Value] = []
    ) -> Message {
        var message = Message(kind: .methodCall, body: body)
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        return message
    }

    /// A signal emitted from `path`; broadcast unless `destination` is set.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [Value] = [],
        destination: BusName? = nil
    ) -> Message {
        var message = Message(kind: .signal, body: body)
        message.path = path
        message.interface = interface
        message.member = member
        message.destination = destination
        return message
    }

    /// The error carried by an error message: its name and first string
    /// argument.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        return DBusError(errorName ?? .failed, body.first?.string ?? "")
    }
}
