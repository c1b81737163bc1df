extension BluetoothAddress {
    /// The element BlueZ gives a device's object path: `dev_AA_BB_CC_DD_EE_FF`
    /// (as in `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
    ///
    /// D-Bus path elements allow only `[A-Za-z0-9_]`, so BlueZ replaces the
    /// colons with underscores (src/device.c, `device_new`).
    public var objectPathElement: String { "dev_" + formatted(separator: "_") }

    /// The address in a device path element `dev_AA_BB_CC_DD_EE_FF` (hex
    /// digits in any case). Anything else, including a longer path, throws.
    public init(objectPathElement element: String) throws(ParseError) {
        let utf8 = Array(element.utf8)
        guard utf8.count == 21, utf8.starts(with: "dev_".utf8),
              let value = Self.parse(Array(utf8.dropFirst(4)), separators: [UInt8(ascii: "_")]),
              let address = BluetoothAddress(rawValue: value)
        else {
            throw ParseError(
                .invalidObjectPathElement,
                "'\(element)' is not a BlueZ device path element (expected dev_AA_BB_CC_DD_EE_FF)"
            )
        }
        self = address
    }
}
