import DBus

/// One input of the object-tree reducer: a signal from bluetoothd, decoded,
/// or a fact learned from a call's reply.
enum TreeSignal: Sendable, Hashable {
    /// `ObjectManager.InterfacesAdded(o path, a{sa{sv}} interfaces)`.
    case interfacesAdded(ObjectPath, [InterfaceName: [String: Value]])
    /// `ObjectManager.InterfacesRemoved(o path, as interfaces)`.
    case interfacesRemoved(ObjectPath, [InterfaceName])
    /// `Properties.PropertiesChanged(s interface, a{sv} changed, as invalidated)`.
    case propertiesChanged(ObjectPath, InterfaceName, [String: Value], invalidated: [String])
    /// `Device1.Disconnected(s reason, s message)` (BlueZ 5.64+).
    case deviceDisconnected(ObjectPath, reason: String, message: String)
    /// `Device1.Connect()` returned successfully: the device is connected
    /// even if bluetoothd never emits `PropertiesChanged(Connected=true)`,
    /// which bluetoothd 5.66 often omits (docs/simulator.md, "Fidelity").
    case connectReturned(ObjectPath)

    /// The object the signal is about.
    var path: ObjectPath {
        switch self {
        case .interfacesAdded(let path, _), .interfacesRemoved(let path, _), .propertiesChanged(let path, _, _, _),
            .deviceDisconnected(let path, _, _), .connectReturned(let path):
            path
        }
    }

    /// Decodes a signal message from bluetoothd; nil for signals the mirror
    /// does not follow or bodies of the wrong shape.
    init?(_ message: Message) {
        guard message.kind == .signal, let path = message.path, let member = message.member else { return nil }
        let body = message.body
        switch (message.interface, member.rawValue) {
        case (ObjectManager.properties, "PropertiesChanged"):
            guard body.count >= 2, let name = body[0].string.flatMap(InterfaceName.init(rawValue:)),
                let changed = body[1].vardict
            else { return nil }
            self = .propertiesChanged(path, name, changed, invalidated: body.count > 2 ? body[2].strings ?? [] : [])
        case (ObjectManager.interface, "InterfacesAdded"):
            guard body.count == 2, let object = body[0].objectPath else { return nil }
            self = .interfacesAdded(object, ObjectManager.interfaces(body[1]))
        case (ObjectManager.interface, "InterfacesRemoved"):
            guard body.count == 2, let object = body[0].objectPath, let names = body[1].strings else { return nil }
            self = .interfacesRemoved(object, names.compactMap(InterfaceName.init(rawValue:)))
        case (Device1.interface, "Disconnected"):
            self = .deviceDisconnected(
                path, reason: body.first?.string ?? "", message: body.count > 1 ? body[1].string ?? "" : "")
        default:
            return nil
        }
    }
}
