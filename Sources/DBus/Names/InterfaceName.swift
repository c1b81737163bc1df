/// An interface name such as `org.bluez.Device1`.
public struct InterfaceName: ValidatedName {
    public static let kind = "interface name"

    public static let properties = InterfaceName(unchecked: "org.freedesktop.DBus.Properties")
    public static let objectManager = InterfaceName(unchecked: "org.freedesktop.DBus.ObjectManager")
    public static let introspectable = InterfaceName(unchecked: "org.freedesktop.DBus.Introspectable")
    public static let peer = InterfaceName(unchecked: "org.freedesktop.DBus.Peer")
    public static let bus = InterfaceName(unchecked: "org.freedesktop.DBus")

    public let rawValue: String

    public init(unchecked string: String) { rawValue = string }

    public static func isValid(_ string: String) -> Bool {
        NameGrammar.isDottedName(string, allowHyphen: false)
    }
}
