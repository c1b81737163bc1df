import DBus

/// A failure of a Bluetooth operation: what went wrong (`code`), in words
/// (`message`), and, when bluetoothd said so, its D-Bus error name and text
/// kept verbatim.
///
/// The code is an open struct rather than an enum so that new conditions can
/// be added without breaking callers that switch over the known ones.
/// `BlueZError(dbus:)` maps bluetoothd's replies onto codes; docs/central.md
/// lists the BlueZ conditions behind each one.
public struct BlueZError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The condition, independent of how BlueZ spelled it.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No such adapter, device, service, characteristic or descriptor.
        public static let notFound = Code(rawValue: "not-found")
        /// A UUID matched more than one attribute; `candidates` lists them.
        public static let ambiguous = Code(rawValue: "ambiguous")
        /// The operation needs a connection the device does not have.
        public static let notConnected = Code(rawValue: "not-connected")
        /// bluetoothd is busy with the same operation (another client's).
        public static let inProgress = Code(rawValue: "in-progress")
        /// The attribute or the adapter refuses the operation.
        public static let notPermitted = Code(rawValue: "not-permitted")
        /// The peripheral requires authorization, or pairing was refused.
        public static let notAuthorized = Code(rawValue: "not-authorized")
        /// The peripheral requires pairing (insufficient authentication or
        /// encryption).
        public static let notPaired = Code(rawValue: "not-paired")
        /// Pairing was refused: by the agent (the gateway's client said no,
        /// or nobody answered) or by the device (`AuthenticationRejected`).
        public static let pairingRejected = Code(rawValue: "pairing-rejected")
        /// Pairing failed: a wrong passkey or PIN, or a device that could
        /// not complete the exchange (`AuthenticationFailed`).
        public static let authenticationFailed = Code(rawValue: "authentication-failed")
        /// Pairing was cancelled: by the device, by `CancelPairing`, or by
        /// the link going down (`AuthenticationCanceled`).
        public static let pairingCancelled = Code(rawValue: "pairing-cancelled")
        /// The device did not answer the pairing exchange in time
        /// (`AuthenticationTimeout`).
        public static let pairingTimeout = Code(rawValue: "pairing-timeout")
        /// The adapter, the device or the attribute does not support it.
        public static let notSupported = Code(rawValue: "not-supported")
        /// The request is malformed (a bad offset, a value too long, ...).
        public static let invalidArguments = Code(rawValue: "invalid-arguments")
        /// The attribute refused the offset or the length of a read or
        /// write (ATT Invalid Offset or Invalid Attribute Value Length): a
        /// valid request that this attribute's value cannot serve.
        public static let attributeRefused = Code(rawValue: "attribute-refused")
        /// No answer within the caller's timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// The adapter is powered off.
        public static let poweredOff = Code(rawValue: "powered-off")
        /// No adapter (or the adapter in use went away).
        public static let adapterUnavailable = Code(rawValue: "adapter-unavailable")
        /// bluetoothd is not running, or the D-Bus connection to it is lost:
        /// temporary, the central recovers when it is back.
        public static let bluetoothdUnavailable = Code(rawValue: "bluetoothd-unavailable")
        /// The connection could not be made or broke off (page timeout,
        /// connection aborted, disconnected while resolving services).
        public static let connectionFailed = Code(rawValue: "connection-failed")
        /// The peripheral answered with an ATT error (`attError`).
        public static let peripheralFailed = Code(rawValue: "peripheral-failed")
        /// The object exists already (a second subscription of one session...).
        public static let alreadyExists = Code(rawValue: "already-exists")
        /// Every adapter that could take the connection holds as many as
        /// its slot limit allows, and none freed before the deadline.
        public static let noConnectionSlot = Code(rawValue: "no-connection-slot")
        /// The caller cancelled, or the central stopped.
        public static let cancelled = Code(rawValue: "cancelled")
        /// bluetoothd failed in a way it did not classify.
        public static let failed = Code(rawValue: "failed")
    }

    public var code: Code
    /// What happened, for people.
    public var message: String
    /// The D-Bus error name bluetoothd replied with
    /// (`org.bluez.Error.Failed`), if the failure came from D-Bus.
    public var dbusName: String?
    /// The text of that D-Bus error, verbatim.
    public var dbusMessage: String?
    /// The ATT error code, when the peripheral answered with one
    /// (`Operation failed with ATT error: 0x80`, or one of the codes
    /// bluetoothd translates into other D-Bus errors).
    public var attError: UInt8?
    /// For `.ambiguous`: the attributes that matched.
    public var candidates: [AttributeCandidate]

    public init(
        _ code: Code, _ message: String, dbusName: String? = nil, dbusMessage: String? = nil,
        attError: UInt8? = nil, candidates: [AttributeCandidate] = []
    ) {
        self.code = code
        self.message = message
        self.dbusName = dbusName
        self.dbusMessage = dbusMessage
        self.attError = attError
        self.candidates = candidates
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let dbusName { text += " (\(dbusName): \(dbusMessage ?? ""))" }
        return text
    }
}

/// One of several attributes a UUID matched: enough for a client to name
/// the one it meant by handle or by service.
public struct AttributeCandidate: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var handle: UInt16?
    public var serviceUUID: BluetoothUUID
    public var serviceHandle: UInt16?

    public init(uuid: BluetoothUUID, handle: UInt16?, serviceUUID: BluetoothUUID, serviceHandle: UInt16?) {
        self.uuid = uuid
        self.handle = handle
        self.serviceUUID = serviceUUID
        self.serviceHandle = serviceHandle
    }
}
