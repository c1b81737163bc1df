/// A single complete D-Bus type, as one element of a signature.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    /// `aT`
    case array(DBusType)
    /// `a{KV}`: an array of dict entries; the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(T...)`: one or more fields.
    case structure([DBusType])

    /// The type's signature text (`a{sv}` for `.dictionary(key: .string, value: .variant)`).
    public var signature: String {
        var text = ""
        appendSignature(to: &text)
        return text
    }

    public var description: String { signature }

    /// Basic types are the ones allowed as dictionary keys.
    public var isBasic: Bool {
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
            .string, .objectPath, .signature, .unixFD:
            return true
        case .variant, .array, .dictionary, .structure:
            return false
        }
    }

    func appendSignature(to text: inout String) {
        switch self {
        case .array(let element):
            text.append("a")
            element.appendSignature(to: &text)
        case .dictionary(let key, let value):
            text.append("a{")
            key.appendSignature(to: &text)
            value.appendSignature(to: &text)
            text.append("}")
        case .structure(let fields):
            text.append("(")
            for field in fields { field.appendSignature(to: &text) }
            text.append(")")
        default:
            text.append(Character(Unicode.Scalar(code)))
        }
    }

    /// The type code of libdbus (`DBUS_TYPE_*`): an ASCII letter.
    var code: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .boolean: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .variant: UInt8(ascii: "v")
        case .array, .dictionary: UInt8(ascii: "a")
        case .structure: UInt8(ascii: "r")
        }
    }

    /// The basic type or variant for a one-letter code, or nil.
    static func simple(code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }
}
