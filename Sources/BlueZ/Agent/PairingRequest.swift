/// A question bluetoothd asks the gateway's agent while it pairs with a
/// device (or while a device asks to use a service), as one value.
public struct PairingRequest: Sendable, Hashable {
    /// The adapter the device belongs to (`hci0`).
    public var adapter: String
    public var device: BluetoothAddress
    public var kind: Kind

    public init(adapter: String, device: BluetoothAddress, kind: Kind) {
        self.adapter = adapter
        self.device = device
        self.kind = kind
    }

    /// What bluetoothd asks (doc/org.bluez.Agent.rst).
    public enum Kind: Sendable, Hashable {
        /// `RequestPinCode`: a legacy (BR/EDR) PIN of 1 to 16 characters.
        case pinCode
        /// `DisplayPinCode`: show this PIN (informational).
        case displayPinCode(String)
        /// `RequestPasskey`: the 6-digit passkey the device displays.
        case passkey
        /// `DisplayPasskey`: show this passkey; `entered` counts the digits
        /// typed on the device so far (informational).
        case displayPasskey(UInt32, entered: UInt16)
        /// `RequestConfirmation`: does the device show this passkey too
        /// (numeric comparison)?
        case confirmation(UInt32)
        /// `RequestAuthorization`: may the device pair (Just Works that
        /// the other side started)?
        case authorization
        /// `AuthorizeService`: may the device use this profile UUID?
        case serviceAuthorization(String)

        /// The kind's name as clients see it.
        public var name: String {
            switch self {
            case .pinCode: "pin-code"
            case .displayPinCode: "display-pin-code"
            case .passkey: "passkey"
            case .displayPasskey: "display-passkey"
            case .confirmation: "confirmation"
            case .authorization: "authorization"
            case .serviceAuthorization: "service-authorization"
            }
        }

        /// Whether bluetoothd only informs (no answer is awaited).
        public var isDisplayOnly: Bool {
            switch self {
            case .displayPinCode, .displayPasskey: true
            default: false
            }
        }
    }
}

/// The agent's answer to a `PairingRequest`.
public enum PairingAnswer: Sendable, Hashable {
    /// Yes (confirmation, authorization) or noted (display requests).
    case accept
    /// The PIN for `.pinCode`.
    case pinCode(String)
    /// The passkey (0 to 999999) for `.passkey`.
    case passkey(UInt32)
    /// No: bluetoothd is told `org.bluez.Error.Rejected`.
    case reject
    /// Given up: bluetoothd is told `org.bluez.Error.Canceled`.
    case cancel
}
