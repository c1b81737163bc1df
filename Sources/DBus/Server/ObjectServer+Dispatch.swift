extension ObjectServer {
    /// Answers one incoming method call (on the loop thread). The standard
    /// interfaces are answered at once; exported methods and property
    /// setters run in a task of their own and reply when they finish. That
    /// task starts at once on the loop thread and runs there until it first
    /// suspends, so handlers begin in the order the calls came, and before
    /// any message that came after them (a reply the caller awaits, the next
    /// write of a central): tasks merely enqueued could begin in any order.
    func handle(_ message: Message) {
        guard let path = message.path, let member = message.member else { return }
        let reply = Replier(server: self, call: message)
        switch message.interface {
        case InterfaceName.introspectable? where member == "Introspect":
            reply.answer { () throws(DBusError) in [.string(try introspect(path))] }
        case InterfaceName.properties?:
            handleProperties(member, message, path, reply)
        case InterfaceName.objectManager? where member == "GetManagedObjects":
            reply.answer { () throws(DBusError) in [try managedObjects(at: path)] }
        default:
            let lookup = state.withLock { state -> Result<(ExportedInterface, ExportedInterface.Method), DBusError> in
                Self.findMethod(member, interface: message.interface, at: path, in: state)
            }
            switch lookup {
            case .failure(let error):
                reply.fail(error)
            case .success(let (interface, method)):
                guard message.signature == method.inputSignature else {
                    reply.fail(
                        DBusError(
                            .invalidArgs,
                            "\(member) takes (\(method.inputSignature)), not (\(message.signature))"))
                    return
                }
                let call = MethodCall(
                    path: path, interface: interface.name, member: member, sender: message.sender,
                    arguments: message.body)
                let expected = method.outputSignature
                Task.immediate {
                    do {
                        let values = try await method.handler(call)
                        guard values.signature == expected else {
                            reply.fail(
                                DBusError(.failed, "\(member) returned (\(values.signature)), not (\(expected))"))
                            return
                        }
                        reply.succeed(values)
                    } catch {
                        reply.fail(error)
                    }
                }
            }
        }
    }

    private static func findMethod(
        _ member: MemberName, interface: InterfaceName?, at path: ObjectPath, in state: State
    ) -> Result<(ExportedInterface, ExportedInterface.Method), DBusError> {
        guard let object = state.objects[path] else {
            return .failure(DBusError(.unknownObject, "No such object path '\(path)'"))
        }
        if let interface {
            guard let index = object.index(of: interface) else {
                return .failure(DBusError(.unknownInterface, "No such interface '\(interface)' at '\(path)'"))
            }
            let exported = object.interfaces[index].interface
            guard let method = exported.method(named: member) else {
                return .failure(DBusError(.unknownMethod, "No such method '\(member)' in interface '\(interface)'"))
            }
            return .success((exported, method))
        }
        for entry in object.interfaces {
            if let method = entry.interface.method(named: member) { return .success((entry.interface, method)) }
        }
        return .failure(DBusError(.unknownMethod, "No such method '\(member)' at '\(path)'"))
    }

    // MARK: org.freedesktop.DBus.Properties

    private func handleProperties(_ member: MemberName, _ message: Message, _ path: ObjectPath, _ reply: Replier) {
        let arguments = message.body
        switch (member.rawValue, message.signature.rawValue) {
        case ("Get", "ss"):
            reply.answer { () throws(DBusError) in
                let (property, value) = try readableProperty(arguments[1].string ?? "", arguments[0].string ?? "", path)
                _ = property
                return [.variant(value)]
            }
        case ("GetAll", "s"):
            reply.answer { () throws(DBusError) in
                let name = arguments[0].string ?? ""
                let result = state.withLock { state -> Value? in
                    guard let object = state.objects[path] else { return nil }
                    guard let interface = InterfaceName(rawValue: name), let index = object.index(of: interface) else {
                        return .vardict([:])
                    }
                    let entry = object.interfaces[index]
                    return Self.propertyDictionary(entry.interface, entry.properties)
                }
                guard let result else { throw DBusError(.unknownObject, "No such object path '\(path)'") }
                return [result]
            }
        case ("Set", "ssv"):
            let interfaceText = arguments[0].string ?? ""
            let name = arguments[1].string ?? ""
            let value = arguments[2].unwrapped
            let lookup = state.withLock { state -> Result<(InterfaceName, ExportedInterface.Property), DBusError> in
                Self.findProperty(name, interfaceText, path, in: state)
            }
            switch lookup {
            case .failure(let error):
                reply.fail(error)
            case .success(let (interface, property)):
                guard property.access.writable else {
                    reply.fail(DBusError(.propertyReadOnly, "Property '\(name)' is not writable"))
                    return
                }
                guard value.type == property.type else {
                    reply.fail(DBusError(.invalidArgs, "Property '\(name)' is \(property.type), not \(value.type)"))
                    return
                }
                Task.immediate {
                    do {
                        try await property.setter?(path, value)
                        try update([name: value], of: interface, at: path)
                        reply.succeed([])
                    } catch {
                        reply.fail(error)
                    }
                }
            }
        default:
            reply.fail(DBusError(.unknownMethod, "No such method '\(member)' with signature (\(message.signature))"))
        }
    }

    private func readableProperty(_ name: String, _ interfaceText: String, _ path: ObjectPath)
        throws(DBusError) -> (ExportedInterface.Property, Value)
    {
        let result = state.withLock { state -> Result<(ExportedInterface.Property, Value), DBusError> in
            switch Self.findProperty(name, interfaceText, path, in: state) {
            case .failure(let error): return .failure(error)
            case .success(let (interface, property)):
                guard property.access.readable else {
                    return .failure(DBusError(.accessDenied, "Property '\(name)' is not readable"))
                }
                guard let object = state.objects[path], let index = object.index(of: interface),
                    let value = object.interfaces[index].properties[name]
                else {
                    return .failure(DBusError(.invalidArgs, "No such property '\(name)'"))
                }
                return .success((property, value))
            }
        }
        return try result.get()
    }

    private static func findProperty(_ name: String, _ interfaceText: String, _ path: ObjectPath, in state: State)
        -> Result<(InterfaceName, ExportedInterface.Property), DBusError>
    {
        guard let object = state.objects[path] else {
            return .failure(DBusError(.unknownObject, "No such object path '\(path)'"))
        }
        guard let interface = InterfaceName(rawValue: interfaceText), let index = object.index(of: interface) else {
            return .failure(DBusError(.unknownInterface, "No such interface '\(interfaceText)'"))
        }
        guard let property = object.interfaces[index].interface.property(named: name) else {
            return .failure(DBusError(.unknownProperty, "No such property '\(name)'"))
        }
        return .success((interface, property))
    }

    // MARK: org.freedesktop.DBus.ObjectManager

    private func managedObjects(at path: ObjectPath) throws(DBusError) -> Value {
        let entries = state.withLock { state -> [DictionaryEntry]? in
            guard state.managers.contains(path) else { return nil }
            return state.objects.keys.filter { $0 != path && $0.isDescendant(ofOrEqualTo: path) }.sorted().map {
                objectPath in
                let object = state.objects[objectPath].unsafelyUnwrapped
                let interfaces = object.interfaces.map { entry in
                    DictionaryEntry(
                        .string(entry.interface.name.rawValue), Self.propertyDictionary(entry.interface, entry.properties))
                }
                return DictionaryEntry(
                    .objectPath(objectPath),
                    .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), interfaces))
            }
        }
        guard let entries else {
            throw DBusError(.unknownMethod, "No object manager at '\(path)'")
        }
        return .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            entries)
    }
}

/// Sends the reply to one method call, at most once, from any thread.
struct Replier: Sendable {
    let server: ObjectServer
    let call: Message

    func answer(_ body: () throws(DBusError) -> [Value]) {
        do {
            succeed(try body())
        } catch {
            fail(error)
        }
    }

    func succeed(_ values: [Value]) {
        guard !call.noReplyExpected else { return }
        var reply = Message(kind: .methodReturn, body: values)
        reply.replySerial = call.serial
        reply.destination = call.sender
        send(reply)
    }

    func fail(_ error: any Error) {
        guard !call.noReplyExpected else { return }
        let dbusError = (error as? DBusError) ?? DBusError(.failed, String(describing: error))
        var reply = Message(kind: .error, body: [.string(dbusError.message)])
        reply.errorName = dbusError.name
        reply.replySerial = call.serial
        reply.destination = call.sender
        send(reply)
    }

    private func send(_ reply: Message) {
        server.loop.enqueue(.send(reply, reply: nil, id: 0, timeoutMilliseconds: 0, cancellation: nil))
    }
}
