/// A D-Bus error name such as `org.bluez.Error.NotPermitted`.
///
/// The names that the bus and libdbus use are static members, so that
/// `error.name == .noReply` reads as what it checks.
public struct ErrorName: ValidatedName {
    public static let kind = "error name"

    public static let failed = ErrorName(unchecked: "org.freedesktop.DBus.Error.Failed")
    public static let noReply = ErrorName(unchecked: "org.freedesktop.DBus.Error.NoReply")
    public static let timeout = ErrorName(unchecked: "org.freedesktop.DBus.Error.Timeout")
    public static let serviceUnknown = ErrorName(unchecked: "org.freedesktop.DBus.Error.ServiceUnknown")
    public static let nameHasNoOwner = ErrorName(unchecked: "org.freedesktop.DBus.Error.NameHasNoOwner")
    public static let unknownObject = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownObject")
    public static let unknownInterface = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownInterface")
    public static let unknownMethod = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownMethod")
    public static let unknownProperty = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownProperty")
    public static let propertyReadOnly = ErrorName(unchecked: "org.freedesktop.DBus.Error.PropertyReadOnly")
    public static let accessDenied = ErrorName(unchecked: "org.freedesktop.DBus.Error.AccessDenied")
    public static let invalidArgs = ErrorName(unchecked: "org.freedesktop.DBus.Error.InvalidArgs")
    public static let invalidSignature = ErrorName(unchecked: "org.freedesktop.DBus.Error.InvalidSignature")
    public static let limitsExceeded = ErrorName(unchecked: "org.freedesktop.DBus.Error.LimitsExceeded")
    public static let disconnected = ErrorName(unchecked: "org.freedesktop.DBus.Error.Disconnected")
    public static let noMemory = ErrorName(unchecked: "org.freedesktop.DBus.Error.NoMemory")
    public static let notSupported = ErrorName(unchecked: "org.freedesktop.DBus.Error.NotSupported")
    public static let matchRuleNotFound = ErrorName(unchecked: "org.freedesktop.DBus.Error.MatchRuleNotFound")

    public let rawValue: String

    public init(unchecked string: String) { rawValue = string }

    public static func isValid(_ string: String) -> Bool {
        NameGrammar.isDottedName(string, allowHyphen: false)
    }
}
