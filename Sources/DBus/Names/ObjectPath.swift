/// A D-Bus object path such as `/org/bluez/hci0`: `/`, or `/`-separated
/// non-empty elements of `[A-Za-z0-9_]` with no trailing `/`.
public struct ObjectPath: ValidatedName {
    public static let kind = "object path"
    public static let root = ObjectPath(unchecked: "/")

    public let rawValue: String

    public init(unchecked string: String) { rawValue = string }

    public static func isValid(_ string: String) -> Bool {
        let bytes = string.utf8
        guard bytes.first == 0x2F else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = false
        for byte in bytes {
            if byte == 0x2F {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                guard NameGrammar.isWordCharacter(byte) else { return false }
                previousWasSlash = false
            }
        }
        return !previousWasSlash
    }

    /// The path with `element` appended (`element` must be a valid path
    /// element: `[A-Za-z0-9_]+`).
    public func appending(_ element: String) throws(DBusError) -> ObjectPath {
        guard !element.isEmpty, element.utf8.allSatisfy(NameGrammar.isWordCharacter) else {
            throw DBusError(.invalidArgs, "invalid object path element '\(element)'")
        }
        return ObjectPath(unchecked: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The last element (`hci0` for `/org/bluez/hci0`); empty for `/`.
    public var lastElement: Substring {
        guard let slash = rawValue.lastIndex(of: "/") else { return Substring(rawValue) }
        return rawValue[rawValue.index(after: slash)...]
    }

    /// The parent path, or nil for `/`.
    public var parent: ObjectPath? {
        guard rawValue != "/", let slash = rawValue.lastIndex(of: "/") else { return nil }
        if slash == rawValue.startIndex { return .root }
        return ObjectPath(unchecked: String(rawValue[..<slash]))
    }

    /// Whether `self` is `other` or lies beneath it.
    public func isDescendant(ofOrEqualTo other: ObjectPath) -> Bool {
        if other.rawValue == "/" || rawValue == other.rawValue { return true }
        return rawValue.hasPrefix(other.rawValue) && rawValue.utf8.dropFirst(other.rawValue.utf8.count).first == 0x2F
    }
}
