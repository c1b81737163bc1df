/// A bus name: a unique connection name (`:1.42`) or a well-known name
/// (`org.bluez`).
public struct BusName: ValidatedName {
    public static let kind = "bus name"
    /// The message bus itself.
    public static let bus = BusName(unchecked: "org.freedesktop.DBus")

    public let rawValue: String

    public init(unchecked string: String) { rawValue = string }

    public static func isValid(_ string: String) -> Bool {
        if string.hasPrefix(":") {
            return NameGrammar.isDottedName(String(string.dropFirst()), allowHyphen: true, allowLeadingDigit: true)
        }
        return NameGrammar.isDottedName(string, allowHyphen: true)
    }

    /// Whether this is a unique connection name (starts with `:`).
    public var isUnique: Bool { rawValue.hasPrefix(":") }
}
