import DBus

extension BlueZError {
    /// The error for a D-Bus failure of a call to bluetoothd, its name and
    /// message kept.
    ///
    /// bluetoothd's names are in src/error.c; GATT failures come from
    /// `create_gatt_dbus_error` in src/gatt-client.c, which turns some ATT
    /// errors into other names (read/write not permitted, "Not paired" as
    /// NotPermitted, invalid offset or length as InvalidArguments,
    /// authorization as NotAuthorized, request not supported as
    /// NotSupported) and every other one into
    /// `org.bluez.Error.Failed: Operation failed with ATT error: 0x80`.
    public init(dbus error: DBusError) {
        let name = error.name.rawValue
        let text = error.message
        let code: Code
        var att: UInt8?
        switch name {
        case "org.bluez.Error.DoesNotExist", ErrorName.unknownObject.rawValue,
            ErrorName.unknownInterface.rawValue, ErrorName.unknownMethod.rawValue:
            code = .notFound
        case "org.bluez.Error.NotConnected":
            code = .notConnected
        case "org.bluez.Error.InProgress", "org.bluez.Error.Busy":
            code = .inProgress
        case "org.bluez.Error.NotPermitted":
            code = text == "Not paired" ? .notPaired : .notPermitted
            att = Self.attCode(forNotPermitted: text)
        case "org.bluez.Error.NotAuthorized", ErrorName.accessDenied.rawValue:
            code = .notAuthorized
        // Device1.Pair's failures: bluetoothd names the outcome of the
        // bonding (src/device.c, from the kernel's pairing status).
        case "org.bluez.Error.AuthenticationRejected":
            code = .pairingRejected
        case "org.bluez.Error.AuthenticationFailed":
            code = .authenticationFailed
        case "org.bluez.Error.AuthenticationCanceled":
            code = .pairingCancelled
        case "org.bluez.Error.AuthenticationTimeout":
            code = .pairingTimeout
        case "org.bluez.Error.NotSupported", "org.bluez.Error.NotAvailable", ErrorName.notSupported.rawValue:
            code = .notSupported
        case "org.bluez.Error.InvalidValueLength", "org.bluez.Error.InvalidOffset":
            code = .attributeRefused
        case "org.bluez.Error.InvalidArguments" where ["invalid offset", "invalid length"].contains(text.lowercased()):
            // create_gatt_dbus_error: the peripheral's ATT Invalid Offset
            // (0x07) or Invalid Attribute Value Length (0x0d).
            code = .attributeRefused
            att = text.lowercased() == "invalid offset" ? 0x07 : 0x0d
        case "org.bluez.Error.InvalidArguments", ErrorName.invalidArgs.rawValue, ErrorName.invalidSignature.rawValue:
            code = .invalidArguments
        case "org.bluez.Error.NotReady":
            // btd_error_not_ready: the adapter is powered off (src/adapter.c).
            code = .poweredOff
        case "org.bluez.Error.AlreadyExists", "org.bluez.Error.AlreadyConnected":
            code = .alreadyExists
        case ErrorName.noReply.rawValue, ErrorName.timeout.rawValue:
            code = .timeout
        case ErrorName.serviceUnknown.rawValue, ErrorName.nameHasNoOwner.rawValue, ErrorName.disconnected.rawValue:
            code = .bluetoothdUnavailable
        case "org.bluez.Error.Failed":
            if let parsed = Self.attCode(inFailedMessage: text) {
                code = .peripheralFailed
                att = parsed
            } else if text == "Not connected" || text == "Not Connected" {
                code = .notConnected
            } else if text.hasPrefix("le-connection-") || text.hasPrefix("br-connection-")
                || text.contains("connection abort") || text == "Page Timeout"
            {
                code = .connectionFailed
            } else {
                code = .failed
            }
        case "org.bluez.Error.ConnectionAttemptFailed":
            code = .connectionFailed
        default:
            code = .failed
        }
        self.init(code, text.isEmpty ? name : text, dbusName: name, dbusMessage: text, attError: att)
    }

    /// `Operation failed with ATT error: 0x80` -> 0x80.
    static func attCode(inFailedMessage text: String) -> UInt8? {
        let prefix = "Operation failed with ATT error: 0x"
        guard text.hasPrefix(prefix) else { return nil }
        return UInt8(text.dropFirst(prefix.count), radix: 16)
    }

    /// The ATT codes behind bluetoothd's NotPermitted texts.
    static func attCode(forNotPermitted text: String) -> UInt8? {
        switch text {
        case "Read not permitted": 0x02
        case "Write not permitted": 0x03
        default: nil
        }
    }

    /// Wraps any error an operation threw: D-Bus errors are mapped,
    /// cancellation becomes `.cancelled`, a `BlueZError` stays itself.
    static func wrapping(_ error: any Error) -> BlueZError {
        switch error {
        case let error as BlueZError: error
        case let error as DBusError: BlueZError(dbus: error)
        case is CancellationError: BlueZError(.cancelled, "the operation was cancelled")
        default: BlueZError(.failed, "\(error)")
        }
    }

    static func deviceNotFound(_ address: BluetoothAddress, adapter: String?) -> BlueZError {
        BlueZError(.notFound, "no device \(address)" + (adapter.map { " on \($0)" } ?? ""))
    }

    /// A device missing from the mirror: unknown while BlueZ is reachable,
    /// but only unseen while it is not (the mirror is empty then, and the
    /// device may well be there once BlueZ is back).
    static func deviceMissing(_ address: BluetoothAddress, adapter: String?, in state: CentralState) -> BlueZError {
        guard state.bluetoothdRunning else { return state.unavailability }
        return deviceNotFound(address, adapter: adapter)
    }
}
