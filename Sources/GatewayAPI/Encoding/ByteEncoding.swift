#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How bytes travel in JSON: `hex` (the default, `"0e77"`), `base64`, or
/// `utf8` text.
public enum ByteEncoding: String, Sendable, CaseIterable {
    case hex, base64, utf8

    /// Reads the `encoding` query parameter or JSON field; nil means hex.
    public init(parameter: String?) throws(Problem) {
        guard let parameter else {
            self = .hex
            return
        }
        guard let encoding = ByteEncoding(rawValue: parameter.lowercased()) else {
            throw Problem.invalidParameter("encoding", "must be hex, base64 or utf8, not '\(parameter)'")
        }
        self = encoding
    }

    /// The bytes as text in this encoding, and the encoding actually used:
    /// bytes that are not valid UTF-8 are given in hex rather than lossily
    /// (every value in the API says its encoding beside it).
    public func encode(_ bytes: [UInt8]) -> (text: String, encoding: ByteEncoding) {
        switch self {
        case .hex:
            return (Self.hex(bytes), .hex)
        case .base64:
            return (Data(bytes).base64EncodedString(), .base64)
        case .utf8:
            guard let text = String(validating: bytes, as: UTF8.self) else { return (Self.hex(bytes), .hex) }
            return (text, .utf8)
        }
    }

    /// `{"value": …, "encoding": …}` members for bytes.
    func members(_ bytes: [UInt8]) -> [(String, JSON)] {
        let (text, used) = encode(bytes)
        return [("value", .string(text)), ("encoding", .string(used.rawValue))]
    }

    /// The bytes that `text` stands for in this encoding.
    public func decode(_ text: String, field: String = "value") throws(Problem) -> [UInt8] {
        switch self {
        case .hex:
            guard let bytes = Self.bytes(fromHex: text) else {
                throw Problem.invalidParameter(
                    field, "'\(text.prefix(64))' is not hex (an even number of 0-9a-f digits, optionally 0x-prefixed)")
            }
            return bytes
        case .base64:
            guard let data = Data(base64Encoded: text) else {
                throw Problem.invalidParameter(field, "'\(text.prefix(64))' is not valid base64")
            }
            return Array(data)
        case .utf8:
            return Array(text.utf8)
        }
    }

    /// Lowercase hex, two digits a byte.
    public static func hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { appendHex(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `byte` as two lowercase hex digits: the API's one hex table.
    static func appendHex(_ byte: UInt8, to out: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { table in
            out.append(table[Int(byte >> 4)])
            out.append(table[Int(byte & 0x0f)])
        }
    }

    /// Hex to bytes; nil if not hex. The grammar (openapi.yaml's `HexBytes`):
    /// empty, or an optional `0x`, then two digits a byte (either case), with
    /// at most one `:`, `-` or space between bytes.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        var digits = Array(text.utf8)[...]
        if digits.count >= 2, digits[digits.startIndex] == UInt8(ascii: "0"),
            digits[digits.startIndex + 1] | 0x20 == UInt8(ascii: "x")
        {
            digits = digits.dropFirst(2)
            // A bare "0x" is a typo, not a way to write an empty value ("").
            if digits.isEmpty { return nil }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            if !bytes.isEmpty, [UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: " ")].contains(digits[index]) {
                index += 1
            }
            guard index + 1 < digits.endIndex, let high = nibble(digits[index]), let low = nibble(digits[index + 1])
            else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
