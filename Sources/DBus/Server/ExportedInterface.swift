/// An interface that a connection serves on one or more objects: its
/// methods (with their handlers), properties and signals.
///
/// One description can serve many objects: handlers receive the call, whose
/// `path` says which object was called. Property values live per object in
/// the `ObjectServer`.
public struct ExportedInterface: Sendable {
    public var name: InterfaceName
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]

    public init(_ name: InterfaceName, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// A named, typed argument (for introspection and signature checks).
    public struct Argument: Sendable {
        public var name: String
        public var type: DBusType
        public init(_ name: String, _ type: DBusType) {
            self.name = name
            self.type = type
        }
    }

    /// Answers a method call with the reply's arguments, or throws a
    /// `DBusError` that becomes the error reply. Handlers run in their own
    /// task, so they may await; replies may complete in any order. A handler
    /// begins on the connection's loop thread, in the order the calls came,
    /// and must not block before its first `await`.
    public typealias MethodHandler = @Sendable (MethodCall) async throws -> [Value]

    public struct Method: Sendable {
        public var name: MemberName
        public var inputs: [Argument]
        public var outputs: [Argument]
        public var handler: MethodHandler

        public init(
            _ name: MemberName, inputs: [Argument] = [], outputs: [Argument] = [],
            handler: @escaping MethodHandler
        ) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
            self.handler = handler
        }

        var inputSignature: Signature { Signature(types: inputs.map(\.type)) }
        var outputSignature: Signature { Signature(types: outputs.map(\.type)) }
    }

    public struct Property: Sendable {
        public enum Access: Sendable {
            case read, write, readWrite
            var readable: Bool { self != .write }
            var writable: Bool { self != .read }
        }

        /// What `PropertiesChanged` says when the value changes, as the
        /// `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
        public enum ChangeSignal: Sendable {
            case emitsValue, invalidates, none
        }

        /// Checks and applies a client's `Set` before the server stores the
        /// value and emits the change; throw to refuse it.
        public typealias Setter = @Sendable (_ path: ObjectPath, _ value: Value) async throws -> Void

        public var name: String
        public var type: DBusType
        public var access: Access
        public var changeSignal: ChangeSignal
        public var setter: Setter?

        public init(
            _ name: String, _ type: DBusType, access: Access = .read, changeSignal: ChangeSignal = .emitsValue,
            setter: Setter? = nil
        ) {
            self.name = name
            self.type = type
            self.access = access
            self.changeSignal = changeSignal
            self.setter = setter
        }
    }

    public struct Signal: Sendable {
        public var name: MemberName
        public var arguments: [Argument]
        public init(_ name: MemberName, arguments: [Argument] = []) {
            self.name = name
            self.arguments = arguments
        }
    }

    func method(named name: MemberName) -> Method? { methods.first { $0.name == name } }
    func property(named name: String) -> Property? { properties.first { $0.name == name } }
}

/// A method call received by an exported object.
public struct MethodCall: Sendable {
    public var path: ObjectPath
    public var interface: InterfaceName
    public var member: MemberName
    /// The caller's unique name.
    public var sender: BusName?
    public var arguments: [Value]
}
