/// A string that is not a valid Bluetooth value: an address, a UUID, an
/// adapter name or a BlueZ object path element.
///
/// The code says which kind of value was expected, so the HTTP layer can map
/// it (to a 400) without reading the message; the message is for people and
/// quotes the rejected input.
public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of value failed to parse. An open set (like `Errno` in
    /// swift-system) so new kinds of value do not break exhaustive switches.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// Not `AA:BB:CC:DD:EE:FF`, `AA-BB-CC-DD-EE-FF` or `AABBCCDDEEFF`.
        public static let invalidAddress = Code(rawValue: "invalid-address")
        /// Not a 16-bit, 32-bit or 128-bit UUID.
        public static let invalidUUID = Code(rawValue: "invalid-uuid")
        /// Not a BlueZ device path element `dev_AA_BB_CC_DD_EE_FF`.
        public static let invalidObjectPathElement = Code(rawValue: "invalid-object-path-element")
        /// Not an adapter name `hci0` ... `hci9999`.
        public static let invalidAdapterName = Code(rawValue: "invalid-adapter-name")
        /// Not a connection slot limit `7`, `hci1=5` or `7,hci1=5`.
        public static let invalidSlotLimit = Code(rawValue: "invalid-slot-limit")
    }

    /// What kind of value was expected.
    public var code: Code
    /// For people: the rejected input and the accepted forms.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
