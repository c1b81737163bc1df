import DBus

/// `org.freedesktop.DBus.ObjectManager` and `Properties` as bluetoothd uses
/// them: the shapes of `GetManagedObjects` and of the three signals the
/// mirror follows.
enum ObjectManager {
    static let interface: InterfaceName = "org.freedesktop.DBus.ObjectManager"
    static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
    static let bluez: BusName = "org.bluez"

    /// `a{oa{sa{sv}}}` as path -> interface -> properties.
    static func objects(_ value: Value) -> [(ObjectPath, [InterfaceName: [String: Value]])] {
        var result: [(ObjectPath, [InterfaceName: [String: Value]])] = []
        for entry in value.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath else { continue }
            result.append((path, interfaces(entry.value)))
        }
        return result
    }

    /// `a{sa{sv}}` as interface -> properties.
    static func interfaces(_ value: Value) -> [InterfaceName: [String: Value]] {
        var result: [InterfaceName: [String: Value]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.string.flatMap(InterfaceName.init(rawValue:)) else { continue }
            result[name] = entry.value.vardict ?? [:]
        }
        return result
    }
}

/// The attribute handle in a GATT object's path: bluetoothd 5.66 names
/// client objects by handle (`service%04x`, `char%04x`, `desc%04x` in
/// src/gatt-client.c) and, without -E, exports no `Handle` property for
/// them (seen in the VM recording), so the path is where the handle is.
func handle(fromPath path: ObjectPath) -> UInt16? {
    let element = path.lastElement
    for prefix in ["service", "char", "desc"] where element.hasPrefix(prefix) {
        return UInt16(element.dropFirst(prefix.count), radix: 16)
    }
    return nil
}
