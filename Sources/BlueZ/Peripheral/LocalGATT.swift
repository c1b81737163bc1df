import DBus

/// The interfaces of a GATT application's objects as bluetoothd reads
/// them (doc/org.bluez.GattService.rst, GattCharacteristic.rst,
/// GattDescriptor.rst, the server side), and the D-Bus errors by which an
/// application answers a central with an ATT error
/// (`dbus_error_to_att_ecode` in src/gatt-database.c).
enum LocalGATT {
    static let service: InterfaceName = "org.bluez.GattService1"
    static let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let descriptor: InterfaceName = "org.bluez.GattDescriptor1"
    static let vardict = DBusType.dictionary(key: .string, value: .variant)

    /// The ATT error codes an application can make bluetoothd send: the
    /// ones it maps from error names, and the application range
    /// 0x80-0x9F (`org.bluez.Error.Failed` with the code as its message).
    static func canSend(_ code: UInt8) -> Bool {
        [0x02, 0x03, 0x06, 0x07, 0x08, 0x0d, 0x0e].contains(code) || (0x80...0x9f).contains(code)
    }

    /// The error reply that makes bluetoothd answer the central with `code`.
    static func error(forATT code: UInt8) -> DBusError {
        func bluez(_ suffix: String, _ message: String) -> DBusError {
            DBusError(ErrorName(unchecked: "org.bluez.Error." + suffix), message)
        }
        switch code {
        case 0x02: return bluez("NotPermitted", "Read not permitted")
        case 0x03: return bluez("NotPermitted", "Write not permitted")
        case 0x06: return bluez("NotSupported", "Request not supported")
        case 0x07: return bluez("InvalidOffset", "Invalid offset")
        case 0x08: return bluez("NotAuthorized", "Not authorized")
        case 0x0d: return bluez("InvalidValueLength", "Invalid value length")
        case 0x80...0x9f: return bluez("Failed", "0x" + String(code, radix: 16))
        // Any other name is "Unlikely Error" to bluetoothd.
        default: return DBusError(.failed, "Unlikely error")
        }
    }

    static func serviceInterface() -> ExportedInterface {
        ExportedInterface(
            service,
            properties: [.init("UUID", .string), .init("Primary", .boolean), .init("Includes", .array(.objectPath))])
    }

    static func characteristicInterface(_ peripheral: Peripheral) -> ExportedInterface {
        ExportedInterface(
            characteristic,
            methods: [
                .init("ReadValue", inputs: [.init("options", vardict)], outputs: [.init("value", .array(.byte))]) {
                    [weak peripheral] call in
                    guard let peripheral else { throw DBusError(.failed, "the gateway is stopping") }
                    return [.bytes(try await peripheral.centralRead(call.path, options: call.arguments.first?.vardict ?? [:]))]
                },
                .init("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", vardict)]) {
                    [weak peripheral] call in
                    guard let peripheral else { throw DBusError(.failed, "the gateway is stopping") }
                    try await peripheral.centralWrite(
                        call.path, call.arguments.first?.bytes ?? [],
                        options: call.arguments.dropFirst().first?.vardict ?? [:])
                    return []
                },
                .init("StartNotify") { [weak peripheral] call in
                    peripheral?.notifyingChanged(call.path, true)
                    return []
                },
                .init("StopNotify") { [weak peripheral] call in
                    peripheral?.notifyingChanged(call.path, false)
                    return []
                },
                .init("Confirm") { [weak peripheral] call in
                    peripheral?.confirmed(call.path)
                    return []
                },
            ],
            properties: [
                .init("UUID", .string), .init("Service", .objectPath), .init("Value", .array(.byte)),
                .init("Notifying", .boolean), .init("Flags", .array(.string)),
            ])
    }

    static func descriptorInterface(_ peripheral: Peripheral) -> ExportedInterface {
        ExportedInterface(
            descriptor,
            methods: [
                .init("ReadValue", inputs: [.init("options", vardict)], outputs: [.init("value", .array(.byte))]) {
                    [weak peripheral] call in
                    guard let objects = peripheral?.central.connection.objects,
                        let value = objects.property("Value", of: descriptor, at: call.path)?.bytes
                    else { throw DBusError(.failed, "the gateway is stopping") }
                    let offset = Int(call.arguments.first?.vardict?["offset"]?.uint16 ?? 0)
                    guard offset <= value.count else { throw error(forATT: 0x07) }
                    return [.bytes(Array(value[offset...]))]
                },
                .init("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", vardict)]) {
                    [weak peripheral] call in
                    guard let objects = peripheral?.central.connection.objects,
                        var value = objects.property("Value", of: descriptor, at: call.path)?.bytes
                    else { throw DBusError(.failed, "the gateway is stopping") }
                    let offset = Int(call.arguments.dropFirst().first?.vardict?["offset"]?.uint16 ?? 0)
                    guard offset <= value.count else { throw error(forATT: 0x07) }
                    value = Array(value[..<offset]) + (call.arguments.first?.bytes ?? [])
                    try objects.update(["Value": .bytes(value)], of: descriptor, at: call.path, emit: false)
                    return []
                },
            ],
            properties: [
                .init("UUID", .string), .init("Characteristic", .objectPath), .init("Value", .array(.byte)),
                .init("Flags", .array(.string)),
            ])
    }
}

extension Peripheral {
    /// Exports an application's objects (replacing what is there), with an
    /// object manager at its root, as `RegisterApplication` expects.
    func export(_ record: ApplicationRecord, on objects: ObjectServer) throws(DBusError) {
        let service = LocalGATT.serviceInterface()
        let characteristic = LocalGATT.characteristicInterface(self)
        let descriptor = LocalGATT.descriptorInterface(self)
        objects.addObjectManager(at: record.root)
        for (s, definition) in record.definition.services.enumerated() {
            let path = ObjectPath(unchecked: "\(record.root.rawValue)/service\(s)")
            try objects.add(
                service, at: path,
                properties: [
                    "UUID": .string(definition.uuid.uuidString), "Primary": .boolean(definition.primary),
                    "Includes": .objectPaths([]),
                ])
        }
        for entry in record.characteristics {
            let servicePath = ObjectPath(unchecked: "\(record.root.rawValue)/service\(entry.service)")
            try objects.add(
                characteristic, at: entry.path,
                properties: [
                    "UUID": .string(entry.definition.uuid.uuidString), "Service": .objectPath(servicePath),
                    "Value": .bytes(entry.value), "Notifying": .boolean(entry.notifying),
                    "Flags": .strings(entry.definition.flags),
                ])
            for (d, definition) in entry.definition.descriptors.enumerated() {
                try objects.add(
                    descriptor, at: ObjectPath(unchecked: "\(entry.path.rawValue)/desc\(d)"),
                    properties: [
                        "UUID": .string(definition.uuid.uuidString), "Characteristic": .objectPath(entry.path),
                        "Value": .bytes(definition.value), "Flags": .strings(definition.flags),
                    ])
            }
        }
    }
}
