import DBus

/// `org.bluez.GattDescriptor1` (doc/gatt-api.txt).
enum GattDescriptor1 {
    static let interface: InterfaceName = "org.bluez.GattDescriptor1"

    static func make(path: ObjectPath, properties: [String: Value]) -> MirroredDescriptor? {
        guard let uuid = properties["UUID"]?.string.flatMap(BluetoothUUID.init),
            let characteristic = properties["Characteristic"]?.objectPath ?? path.parent
        else { return nil }
        var descriptor = MirroredDescriptor(path: path, characteristicPath: characteristic, uuid: uuid)
        descriptor.handle = handle(fromPath: path)
        apply(properties, to: &descriptor)
        return descriptor
    }

    static func apply(_ changed: [String: Value], invalidated: [String] = [], to descriptor: inout MirroredDescriptor) {
        for (key, value) in changed {
            switch key {
            case "Value": descriptor.value = value.bytes
            case "Handle": descriptor.handle = value.uint16
            case "Flags":
                let parsed = DescriptorFlags.parse(bluezFlags: value.strings ?? [])
                descriptor.flags = parsed.flags
                descriptor.unknownFlags = parsed.unknown
            default: break
            }
        }
        if invalidated.contains("Value") { descriptor.value = nil }
    }
}
