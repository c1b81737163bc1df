import DBus

/// The errors bluetoothd 5.66 replies with, with its exact names and
/// messages (src/error.c, src/gatt-client.c, src/device.c, src/adapter.c).
///
/// Clients match on these strings, so they are kept verbatim; each one
/// names the condition it stands for where the simulator uses it.
enum BluetoothdError {
    static func invalidArguments(_ message: String = "Invalid arguments in method call") -> DBusError {
        DBusError(name("InvalidArguments"), message)
    }
    /// `btd_error_busy`: a second StartDiscovery from the same client.
    static var busy: DBusError { DBusError(name("InProgress"), "Operation already in progress") }
    /// `btd_error_in_progress`: a second Connect while one is pending.
    static var inProgress: DBusError { DBusError(name("InProgress"), "In Progress") }
    static var alreadyExists: DBusError { DBusError(name("AlreadyExists"), "Already Exists") }
    static var notSupported: DBusError { DBusError(name("NotSupported"), "Operation is not supported") }
    static var notConnected: DBusError { DBusError(name("NotConnected"), "Not Connected") }
    static var alreadyConnected: DBusError { DBusError(name("AlreadyConnected"), "Already Connected") }
    static var notAvailable: DBusError { DBusError(name("NotAvailable"), "Operation currently not available") }
    static var doesNotExist: DBusError { DBusError(name("DoesNotExist"), "Does Not Exist") }
    static var notAuthorized: DBusError { DBusError(name("NotAuthorized"), "Operation Not Authorized") }
    /// `btd_error_not_ready`: the adapter is powered off.
    static var notReady: DBusError { DBusError(name("NotReady"), "Resource Not Ready") }
    static func notPermitted(_ message: String) -> DBusError { DBusError(name("NotPermitted"), message) }
    static func failed(_ message: String) -> DBusError { DBusError(name("Failed"), message) }
    /// The bonding's outcomes (src/device.c, `new_authentication_return`).
    static var authenticationFailed: DBusError { DBusError(name("AuthenticationFailed"), "Authentication Failed") }
    static var authenticationTimeout: DBusError { DBusError(name("AuthenticationTimeout"), "Authentication Timeout") }
    static var authenticationCanceled: DBusError {
        DBusError(name("AuthenticationCanceled"), "Authentication Canceled")
    }

    /// The D-Bus error bluetoothd makes of an ATT error response
    /// (`create_gatt_dbus_error` in src/gatt-client.c).
    static func att(_ code: UInt8) -> DBusError {
        switch code {
        case ATTError.readNotPermitted: notPermitted("Read not permitted")
        case ATTError.writeNotPermitted: notPermitted("Write not permitted")
        case ATTError.insufficientAuthentication, ATTError.insufficientEncryption,
            ATTError.insufficientEncryptionKeySize:
            notPermitted("Not paired")
        case ATTError.invalidOffset: invalidArguments("Invalid offset")
        case ATTError.invalidAttributeValueLength: invalidArguments("Invalid Length")
        case ATTError.insufficientAuthorization: notAuthorized
        case ATTError.requestNotSupported: notSupported
        case 0: failed("Operation failed")
        default: failed("Operation failed with ATT error: 0x" + hex(code))
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }

    private static func name(_ suffix: String) -> ErrorName {
        ErrorName(unchecked: "org.bluez.Error." + suffix)
    }
}

/// ATT error codes (Core Specification Vol 3, Part F, 3.4.1.1).
public enum ATTError {
    public static let invalidHandle: UInt8 = 0x01
    public static let readNotPermitted: UInt8 = 0x02
    public static let writeNotPermitted: UInt8 = 0x03
    public static let insufficientAuthentication: UInt8 = 0x05
    public static let requestNotSupported: UInt8 = 0x06
    public static let invalidOffset: UInt8 = 0x07
    public static let insufficientAuthorization: UInt8 = 0x08
    public static let attributeNotLong: UInt8 = 0x0b
    public static let insufficientEncryptionKeySize: UInt8 = 0x0c
    public static let invalidAttributeValueLength: UInt8 = 0x0d
    public static let unlikelyError: UInt8 = 0x0e
    public static let insufficientEncryption: UInt8 = 0x0f
}
