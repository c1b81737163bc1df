import Synchronization

/// The objects a connection exports, with their interfaces and property
/// values; answers method calls, `org.freedesktop.DBus.Properties`,
/// `org.freedesktop.DBus.ObjectManager` and
/// `org.freedesktop.DBus.Introspectable`.
///
/// Adding or removing objects under an object manager emits
/// `InterfacesAdded`/`InterfacesRemoved`; updating properties emits
/// `PropertiesChanged`. All methods may be called from any thread; signals
/// leave in the order the calls were made.
public final class ObjectServer: Sendable {
    struct Object {
        /// In the order added: introspection and GetManagedObjects keep it.
        var interfaces: [(interface: ExportedInterface, properties: [String: Value])] = []

        func index(of name: InterfaceName) -> Int? { interfaces.firstIndex { $0.interface.name == name } }
    }

    struct State {
        var objects: [ObjectPath: Object] = [:]
        var managers: Set<ObjectPath> = []
    }

    let state = Mutex(State())
    let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    // MARK: Objects

    /// Makes `path` an object manager (`GetManagedObjects`, and the source of
    /// `InterfacesAdded`/`InterfacesRemoved` for objects beneath it).
    public func addObjectManager(at path: ObjectPath) {
        state.withLock { _ = $0.managers.insert(path) }
    }

    /// Stops `path` being an object manager (its objects stay exported).
    public func removeObjectManager(at path: ObjectPath) {
        state.withLock { _ = $0.managers.remove(path) }
    }

    /// Adds interfaces (with their initial property values) to the object at
    /// `path`, creating it if needed, and announces them in one
    /// `InterfacesAdded`. Adding an interface the object already has
    /// replaces it.
    public func add(
        _ interfaces: [(ExportedInterface, [String: Value])], at path: ObjectPath
    ) throws(DBusError) {
        for (interface, values) in interfaces { try Self.check(values, against: interface) }
        let manager = state.withLock { state -> ObjectPath? in
            var object = state.objects[path] ?? Object()
            for (interface, values) in interfaces {
                if let index = object.index(of: interface.name) {
                    object.interfaces[index] = (interface, values)
                } else {
                    object.interfaces.append((interface, values))
                }
            }
            state.objects[path] = object
            return Self.manager(of: path, in: state)
        }
        if let manager {
            let added = interfaces.map { interface, values in
                DictionaryEntry(.string(interface.name.rawValue), Self.propertyDictionary(interface, values))
            }
            emit(
                path: manager, interface: .objectManager, member: "InterfacesAdded",
                [.objectPath(path), .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), added)])
        }
    }

    /// Adds one interface to the object at `path`.
    public func add(_ interface: ExportedInterface, at path: ObjectPath, properties: [String: Value] = [:])
        throws(DBusError)
    {
        try add([(interface, properties)], at: path)
    }

    /// Removes interfaces from the object at `path` (all of them when
    /// `names` is nil, which removes the object) and announces it with
    /// `InterfacesRemoved`.
    public func remove(_ names: [InterfaceName]? = nil, at path: ObjectPath) {
        let (removed, manager) = state.withLock { state -> ([InterfaceName], ObjectPath?) in
            guard var object = state.objects[path] else { return ([], nil) }
            let removed = object.interfaces.map(\.interface.name).filter { names?.contains($0) ?? true }
            object.interfaces.removeAll { removed.contains($0.interface.name) }
            state.objects[path] = object.interfaces.isEmpty ? nil : object
            return (removed, Self.manager(of: path, in: state))
        }
        guard !removed.isEmpty, let manager else { return }
        emit(
            path: manager, interface: .objectManager, member: "InterfacesRemoved",
            [.objectPath(path), .strings(removed.map(\.rawValue))])
    }

    /// Whether an object is exported at `path`.
    public func contains(_ path: ObjectPath) -> Bool {
        state.withLock { $0.objects[path] != nil }
    }

    /// The exported paths beneath (and including) `path`.
    public func paths(under path: ObjectPath) -> [ObjectPath] {
        state.withLock { $0.objects.keys.filter { $0.isDescendant(ofOrEqualTo: path) } }
    }

    // MARK: Properties

    /// The current value of a property, or nil.
    public func property(_ name: String, of interface: InterfaceName, at path: ObjectPath) -> Value? {
        state.withLock { state in
            guard let object = state.objects[path], let index = object.index(of: interface) else { return nil }
            return object.interfaces[index].properties[name]
        }
    }

    /// All property values of an interface of the object, or nil.
    public func properties(of interface: InterfaceName, at path: ObjectPath) -> [String: Value]? {
        state.withLock { state in
            guard let object = state.objects[path], let index = object.index(of: interface) else { return nil }
            return object.interfaces[index].properties
        }
    }

    /// Stores new property values and emits one `PropertiesChanged` for
    /// them (even when a value equals the old one: a repeated notification
    /// is still an event). Properties declared with `.invalidates` are
    /// listed by name only; `.none` ones are stored silently.
    public func update(
        _ changes: [String: Value], of interface: InterfaceName, at path: ObjectPath, invalidating: [String] = [],
        emit shouldEmit: Bool = true
    ) throws(DBusError) {
        let result = state.withLock { state -> Result<([String: Value], [String]), DBusError> in
            guard var object = state.objects[path], let index = object.index(of: interface) else {
                return .failure(DBusError(.unknownObject, "no interface \(interface) at \(path)"))
            }
            let description = object.interfaces[index].interface
            var emitted: [String: Value] = [:]
            var invalidated = invalidating
            for (name, value) in changes {
                guard let property = description.property(named: name) else {
                    return .failure(DBusError(.unknownProperty, "no property \(name) on \(interface)"))
                }
                guard value.type == property.type else {
                    return .failure(
                        DBusError(.invalidArgs, "property \(name) is \(property.type), not \(value.type)"))
                }
                object.interfaces[index].properties[name] = value
                switch property.changeSignal {
                case .emitsValue: emitted[name] = value
                case .invalidates: invalidated.append(name)
                case .none: break
                }
            }
            for name in invalidating { object.interfaces[index].properties[name] = nil }
            state.objects[path] = object
            return .success((emitted, invalidated))
        }
        let (emitted, invalidated) = try result.get()
        guard shouldEmit, !emitted.isEmpty || !invalidated.isEmpty else { return }
        emit(
            path: path, interface: .properties, member: "PropertiesChanged",
            [.string(interface.rawValue), .vardict(emitted), .strings(invalidated)])
    }

    // MARK: Helpers

    func emit(path: ObjectPath, interface: InterfaceName, member: MemberName, _ arguments: [Value]) {
        loop.enqueue(
            .send(
                .signal(path: path, interface: interface, member: member, body: arguments), reply: nil, id: 0,
                timeoutMilliseconds: 0, cancellation: nil))
    }

    static func manager(of path: ObjectPath, in state: State) -> ObjectPath? {
        var candidate = path.parent
        while let current = candidate {
            if state.managers.contains(current) { return current }
            candidate = current.parent
        }
        return nil
    }

    static func propertyDictionary(_ interface: ExportedInterface, _ values: [String: Value]) -> Value {
        var readable: [String: Value] = [:]
        for property in interface.properties where property.access.readable {
            if let value = values[property.name] { readable[property.name] = value }
        }
        return .vardict(readable)
    }

    static func check(_ values: [String: Value], against interface: ExportedInterface) throws(DBusError) {
        for (name, value) in values {
            guard let property = interface.property(named: name) else {
                throw DBusError(.unknownProperty, "no property \(name) on \(interface.name)")
            }
            guard value.type == property.type else {
                throw DBusError(.invalidArgs, "property \(name) is \(property.type), not \(value.type)")
            }
            try value.validate()
        }
    }
}
