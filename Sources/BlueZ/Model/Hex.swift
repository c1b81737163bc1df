/// Hexadecimal digits for the parsers and formatters of this module.
///
/// Works on UTF-8 bytes rather than `Character`s: inputs are ASCII when
/// valid, and byte arithmetic keeps the parsers free of Foundation.
enum Hex {
    /// The value of one hex digit in either case, or nil.
    static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The value of a run of hex digits (at most 32 of them), or nil if any
    /// byte is not a hex digit or the run is empty.
    static func value(of digits: some Collection<UInt8>) -> UInt128? {
        guard !digits.isEmpty, digits.count <= 32 else { return nil }
        var result: UInt128 = 0
        for byte in digits {
            guard let digit = value(of: byte) else { return nil }
            result = result << 4 | UInt128(digit)
        }
        return result
    }

    /// The digit for the low four bits of `value`, in lowercase or uppercase.
    static func digit(_ value: UInt8, uppercase: Bool = false) -> UInt8 {
        let nibble = value & 0xF
        if nibble < 10 { return UInt8(ascii: "0") + nibble }
        return (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
    }

    /// `value` as exactly `width` hex digits (zero-padded, truncated to the
    /// low `width` digits), in lowercase or uppercase.
    static func string(_ value: UInt128, width: Int, uppercase: Bool = false) -> String {
        var bytes = [UInt8](repeating: 0, count: width)
        var rest = value
        for index in stride(from: width - 1, through: 0, by: -1) {
            bytes[index] = digit(UInt8(truncatingIfNeeded: rest), uppercase: uppercase)
            rest >>= 4
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
