/// A match rule: which messages a connection wants the bus to route to it.
///
/// The rule is sent to the bus with `AddMatch` and also applied locally, so
/// that each subscription receives only its own messages when several rules
/// overlap.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    public var kind: Message.Kind? = .signal
    /// A unique or well-known name. The bus resolves well-known names to
    /// their owner; the connection tracks owners to do the same locally.
    public var sender: BusName?
    public var interface: InterfaceName?
    public var member: MemberName?
    public var path: ObjectPath?
    /// The path or anything beneath it.
    public var pathNamespace: ObjectPath?
    public var destination: BusName?
    /// Matches on the string (or object path) value of the first arguments:
    /// `arg0='org.bluez.Device1'`.
    public var arguments: [Int: String] = [:]

    public init(
        kind: Message.Kind? = .signal, sender: BusName? = nil, interface: InterfaceName? = nil,
        member: MemberName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        destination: BusName? = nil, arguments: [Int: String] = [:]
    ) {
        self.kind = kind
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
    }

    /// The rule in the bus's text syntax.
    public var description: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String) {
            // Values are quoted; a quote inside is written '\'' as the
            // specification requires.
            parts.append("\(key)='\(value.replacing("'", with: "'\\''"))'")
        }
        if let kind {
            let name: String =
                switch kind {
                case .signal: "signal"
                case .methodCall: "method_call"
                case .methodReturn: "method_return"
                case .error: "error"
                }
            add("type", name)
        }
        if let sender { add("sender", sender.rawValue) }
        if let interface { add("interface", interface.rawValue) }
        if let member { add("member", member.rawValue) }
        if let path { add("path", path.rawValue) }
        if let pathNamespace { add("path_namespace", pathNamespace.rawValue) }
        if let destination { add("destination", destination.rawValue) }
        for index in arguments.keys.sorted() {
            if let value = arguments[index] { add("arg\(index)", value) }
        }
        return parts.joined(separator: ",")
    }

    /// Whether `message` matches every field of the rule except a
    /// well-known `sender`, which only the caller can resolve.
    func matchesIgnoringWellKnownSender(_ message: Message) -> Bool {
        if let kind, kind != message.kind { return false }
        if let sender, sender.isUnique, sender != message.sender { return false }
        if let interface, interface != message.interface { return false }
        if let member, member != message.member { return false }
        if let path, path != message.path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isDescendant(ofOrEqualTo: pathNamespace) else {
                return false
            }
        }
        if let destination, destination != message.destination { return false }
        for (index, expected) in arguments {
            guard index < message.body.count else { return false }
            switch message.body[index] {
            case .string(let actual) where actual == expected: continue
            case .objectPath(let actual) where actual.rawValue == expected: continue
            default: return false
            }
        }
        return true
    }
}
