import DBus

/// `org.bluez.GattService1` (doc/gatt-api.txt).
enum GattService1 {
    static let interface: InterfaceName = "org.bluez.GattService1"

    static func make(path: ObjectPath, properties: [String: Value]) -> MirroredService? {
        guard let uuid = properties["UUID"]?.string.flatMap(BluetoothUUID.init),
            let device = properties["Device"]?.objectPath ?? path.parent
        else { return nil }
        var service = MirroredService(path: path, devicePath: device, uuid: uuid)
        service.handle = handle(fromPath: path)
        apply(properties, to: &service)
        return service
    }

    static func apply(_ changed: [String: Value], to service: inout MirroredService) {
        for (key, value) in changed {
            switch key {
            case "Primary": service.primary = value.bool ?? service.primary
            case "Handle": service.handle = value.uint16
            case "Includes": service.includes = value.array?.compactMap(\.objectPath) ?? []
            default: break
            }
        }
    }
}
