/// A Bluetooth UUID: a 16-bit or 32-bit SIG-assigned number, or a full
/// 128-bit UUID.
///
/// All three are stored as the 128-bit value (a short one is placed into the
/// Bluetooth base UUID `0000xxxx-0000-1000-8000-00805f9b34fb`), so `2a37` and
/// `00002a37-0000-1000-8000-00805f9b34fb` are equal and hash alike. The
/// canonical string (`description`) is the full lowercase form BlueZ uses on
/// D-Bus; `shortString` is the form people type.
public struct BluetoothUUID: Hashable, Sendable {
    /// The 128-bit value, most significant byte first as printed.
    public let rawValue: UInt128

    /// The Bluetooth base UUID, `00000000-0000-1000-8000-00805f9b34fb`
    /// (Core Specification, Vol 3, Part B, 2.5.1). Short UUIDs occupy its top
    /// 32 bits.
    public static let base: UInt128 = 0x0000_0000_0000_1000_8000_0080_5F9B_34FB

    /// The UUID with this 128-bit value.
    public init(rawValue: UInt128) { self.rawValue = rawValue }

    /// The UUID of a 16-bit assigned number, such as `0x2A37`. The 16- and
    /// 32-bit initialisers are labelled because an unlabelled pair makes an
    /// integer literal argument ambiguous.
    public init(uuid16 value: UInt16) { self.init(uuid32: UInt32(value)) }

    /// The UUID of a 32-bit assigned number.
    public init(uuid32 value: UInt32) { rawValue = Self.base | UInt128(value) << 96 }

    /// Parses a 16-bit (`2a37`, `0x2A37`), 32-bit (`00002a37`, `0x00002a37`)
    /// or 128-bit UUID, with or without its dashes
    /// (`00002a37-0000-1000-8000-00805f9b34fb`), hex digits in any case.
    public init(parsing text: String) throws(ParseError) {
        guard let value = Self.parse(Array(text.utf8)) else {
            throw ParseError(
                .invalidUUID,
                "'\(text)' is not a Bluetooth UUID (expected 16-bit 2a37, 32-bit 00002a37 or 128-bit 00002a37-0000-1000-8000-00805f9b34fb)"
            )
        }
        rawValue = value
    }

    /// The 32-bit assigned number if this UUID is built on the base UUID
    /// (16-bit numbers included), otherwise nil.
    public var assignedNumber: UInt32? {
        guard rawValue & ~(UInt128(UInt32.max) << 96) == Self.base else { return nil }
        return UInt32(truncatingIfNeeded: rawValue >> 96)
    }

    /// The full lowercase form, `00002a37-0000-1000-8000-00805f9b34fb`, as
    /// BlueZ's `UUID` properties carry it.
    ///
    /// Written digit by digit into one buffer: it is printed for every
    /// notification a stream carries.
    public var uuidString: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var rest = rawValue
            for index in stride(from: 35, through: 0, by: -1) {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    buffer[index] = UInt8(ascii: "-")
                    continue
                }
                buffer[index] = Hex.digit(UInt8(truncatingIfNeeded: rest))
                rest >>= 4
            }
            return 36
        }
    }

    /// The shortest form: 4 hex digits (`2a37`) for a 16-bit number,
    /// 8 for a 32-bit one, otherwise the full `uuidString`.
    public var shortString: String {
        guard let number = assignedNumber else { return uuidString }
        return Hex.string(UInt128(number), width: number <= UInt16.max ? 4 : 8)
    }

    private static func parse(_ utf8: [UInt8]) -> UInt128? {
        var digits = utf8[...]
        let hasPrefix = digits.starts(with: "0x".utf8) || digits.starts(with: "0X".utf8)
        if hasPrefix { digits = digits.dropFirst(2) }
        switch digits.count {
        case 4, 8:
            return Hex.value(of: digits).map { base | $0 << 96 }
        case 32 where !hasPrefix:
            return Hex.value(of: digits)
        case 36 where !hasPrefix:
            // 8-4-4-4-12: dashes at exactly these offsets, digits elsewhere.
            let dashes: Set = [8, 13, 18, 23]
            var hex: [UInt8] = []
            for (offset, byte) in digits.enumerated() {
                if dashes.contains(offset) {
                    guard byte == UInt8(ascii: "-") else { return nil }
                } else {
                    hex.append(byte)
                }
            }
            return Hex.value(of: hex)
        default:
            return nil
        }
    }
}

extension BluetoothUUID: LosslessStringConvertible {
    /// Parses like `init(parsing:)`, returning nil instead of throwing.
    public init?(_ description: String) {
        guard let uuid = try? Self(parsing: description) else { return nil }
        self = uuid
    }

    /// The canonical form: the full lowercase `uuidString`.
    public var description: String { uuidString }
}
