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
