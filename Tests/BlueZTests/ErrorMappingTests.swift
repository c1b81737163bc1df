import DBus
import Testing

@testable import BlueZ

/// bluetoothd's error replies (src/error.c, create_gatt_dbus_error in
/// src/gatt-client.c) and the codes they map to.
@Suite struct ErrorMappingTests {
    static let table: [(String, String, BlueZError.Code, UInt8?)] = [
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80", .peripheralFailed, 0x80),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e", .peripheralFailed, 0x0e),
        ("org.bluez.Error.Failed", "Not connected", .notConnected, nil),
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", .connectionFailed, nil),
        ("org.bluez.Error.Failed", "Something else", .failed, nil),
        ("org.bluez.Error.NotPermitted", "Read not permitted", .notPermitted, 0x02),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .notPermitted, 0x03),
        ("org.bluez.Error.NotPermitted", "Not paired", .notPaired, nil),
        ("org.bluez.Error.NotAuthorized", "Operation Not Authorized", .notAuthorized, nil),
        ("org.bluez.Error.AuthenticationRejected", "Authentication Rejected", .pairingRejected, nil),
        ("org.bluez.Error.AuthenticationFailed", "Authentication Failed", .authenticationFailed, nil),
        ("org.bluez.Error.AuthenticationCanceled", "Authentication Canceled", .pairingCancelled, nil),
        ("org.bluez.Error.AuthenticationTimeout", "Authentication Timeout", .pairingTimeout, nil),
        ("org.bluez.Error.NotSupported", "Operation is not supported", .notSupported, nil),
        // The peripheral's ATT Invalid Offset / Invalid Attribute Value
        // Length: a valid request this attribute's value cannot serve.
        ("org.bluez.Error.InvalidArguments", "Invalid offset", .attributeRefused, 0x07),
        ("org.bluez.Error.InvalidArguments", "Invalid Length", .attributeRefused, 0x0d),
        ("org.bluez.Error.InvalidArguments", "Invalid arguments in method call", .invalidArguments, nil),
        ("org.bluez.Error.InProgress", "In Progress", .inProgress, nil),
        ("org.bluez.Error.NotReady", "Resource Not Ready", .poweredOff, nil),
        ("org.bluez.Error.DoesNotExist", "Does Not Exist", .notFound, nil),
        ("org.bluez.Error.NotConnected", "Not Connected", .notConnected, nil),
        ("org.bluez.Error.AlreadyConnected", "Already Connected", .alreadyExists, nil),
        ("org.freedesktop.DBus.Error.UnknownObject", "Method ... doesn't exist", .notFound, nil),
        ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .timeout, nil),
        ("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided", .bluetoothdUnavailable, nil),
        ("org.bluez.Error.SomethingNew", "from a newer bluetoothd", .failed, nil),
    ]

    @Test(arguments: table.indices) func mapping(_ index: Int) throws {
        let (name, message, code, att) = Self.table[index]
        let error = BlueZError(dbus: DBusError(try ErrorName(name), message))
        #expect(error.code == code)
        #expect(error.attError == att)
        #expect(error.dbusName == name)
        #expect(error.dbusMessage == message)
    }

    @Test func wrappingKeepsBlueZErrorsAndMapsCancellation() {
        #expect(BlueZError.wrapping(BlueZError(.timeout, "x")).code == .timeout)
        #expect(BlueZError.wrapping(CancellationError()).code == .cancelled)
    }
}
