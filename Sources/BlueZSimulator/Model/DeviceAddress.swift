/// A Bluetooth device address (`C4:7C:8D:6A:3E:01`), as the simulator
/// reads it from scenarios and writes it into object paths.
///
/// The simulator keeps its own small address type instead of the BlueZ
/// client module's: it is an independent reading of bluetoothd.
public struct DeviceAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The six bytes, most significant first (as written).
    public let bytes: [UInt8]

    /// Parses `AA:BB:CC:DD:EE:FF` (also with `-` or `_` separators, any case).
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" || $0 == "_" })
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// An address from six bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// `AA:BB:CC:DD:EE:FF`, upper case, as bluetoothd's `Address` property.
    public var description: String {
        bytes.map(Self.hex).joined(separator: ":")
    }

    /// `dev_AA_BB_CC_DD_EE_FF`, the last component of a device's path.
    public var pathComponent: String {
        "dev_" + bytes.map(Self.hex).joined(separator: "_")
    }

    public static func < (lhs: DeviceAddress, rhs: DeviceAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
    }
}
