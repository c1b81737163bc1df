/// A 48-bit Bluetooth device address (BD_ADDR), such as `AA:BB:CC:DD:EE:FF`.
///
/// Parsing accepts the forms people type into URLs: colons, dashes or no
/// separators, in any case. The canonical form (`description`) is the one
/// BlueZ uses in its `Address` properties: uppercase with colons.
///
/// Whether an address is public or random is not part of the 48 bits; BlueZ
/// reports it separately (`AddressType`).
public struct BluetoothAddress: Hashable, Sendable {
    /// The six bytes as one integer, most significant (first printed) byte
    /// highest. Only the low 48 bits are used, so ordering the integers orders
    /// addresses the way they print.
    public let rawValue: UInt64

    /// The address whose bytes, most significant first, are the low 48 bits
    /// of `rawValue`; nil if any of the top 16 bits is set.
    public init?(rawValue: UInt64) {
        guard rawValue >> 48 == 0 else { return nil }
        self.rawValue = rawValue
    }

    /// The address of six bytes in printed order (`bytes[0]` is `AA` in
    /// `AA:BB:CC:DD:EE:FF`); nil unless there are exactly six.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Parses `AA:BB:CC:DD:EE:FF`, `AA-BB-CC-DD-EE-FF` or `AABBCCDDEEFF`, in
    /// any case. A separated form must use one separator throughout.
    public init(parsing text: String) throws(ParseError) {
        guard let value = Self.parse(Array(text.utf8), separators: [UInt8(ascii: ":"), UInt8(ascii: "-")]) else {
            throw ParseError(
                .invalidAddress,
                "'\(text)' is not a Bluetooth address (expected AA:BB:CC:DD:EE:FF, AA-BB-CC-DD-EE-FF or AABBCCDDEEFF)"
            )
        }
        rawValue = value
    }

    /// The six bytes in printed order.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (40 - 8 * UInt64($0))) }
    }

    /// The address in `separator`-separated uppercase hex (`AA_BB_...` for
    /// object paths, `AA:BB:...` for people and BlueZ properties).
    ///
    /// Written digit by digit into one buffer: it is printed for every
    /// notification and scan result.
    func formatted(separator: String) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(12 + 5 * separator.utf8.count)
        for index in 0..<6 {
            if index > 0 { text += separator.utf8 }
            let byte = UInt8(truncatingIfNeeded: rawValue >> (40 - 8 * UInt64(index)))
            text.append(Hex.digit(byte >> 4, uppercase: true))
            text.append(Hex.digit(byte, uppercase: true))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The 48-bit value of 12 hex digits, alone or as six pairs separated by
    /// one of `separators` (the same one throughout); nil for anything else.
    static func parse(_ utf8: [UInt8], separators: [UInt8]) -> UInt64? {
        let digits: [UInt8]
        switch utf8.count {
        case 12:
            digits = utf8
        case 17:
            // Separators sit after every pair of digits: positions 2, 5, 8, 11, 14.
            let separator = utf8[2]
            guard separators.contains(separator) else { return nil }
            var collected: [UInt8] = []
            for (index, byte) in utf8.enumerated() {
                if index % 3 == 2 {
                    guard byte == separator else { return nil }
                } else {
                    collected.append(byte)
                }
            }
            digits = collected
        default:
            return nil
        }
        return Hex.value(of: digits).map { UInt64(truncatingIfNeeded: $0) }
    }
}

extension BluetoothAddress: Comparable {
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension BluetoothAddress: LosslessStringConvertible {
    /// Parses like `init(parsing:)`, returning nil instead of throwing.
    public init?(_ description: String) {
        guard let address = try? Self(parsing: description) else { return nil }
        self = address
    }

    /// The canonical form: uppercase with colons, `AA:BB:CC:DD:EE:FF`.
    public var description: String { formatted(separator: ":") }
}
