/// A D-Bus type signature: zero or more complete types (`sa{sv}as`).
///
/// Parsing enforces the specification's limits (255 bytes, 32 nested arrays,
/// 32 nested structures, dict entries only directly inside arrays with a basic
/// key), so a `Signature` is always one libdbus accepts.
public struct Signature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let types: [DBusType]
    public let rawValue: String

    public static let empty = Signature(types: [])

    public init(_ text: String) throws(DBusError) {
        var parser = SignatureParser(bytes: Array(text.utf8))
        guard text.utf8.count <= 255, let types = parser.parseAll() else {
            throw DBusError(.invalidSignature, "invalid signature '\(text)'")
        }
        self.types = types
        self.rawValue = text
    }

    public init(types: [DBusType]) {
        self.types = types
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        self.rawValue = text
    }

    /// A literal signature in the source; an invalid literal stops the program.
    public init(stringLiteral value: String) {
        do {
            try self.init(value)
        } catch {
            preconditionFailure("invalid signature literal '\(value)'")
        }
    }

    public var description: String { rawValue }

    /// The single complete type of a one-type signature (the contents of a
    /// variant), or nil.
    public var singleType: DBusType? { types.count == 1 ? types[0] : nil }
}

/// A recursive-descent parser of signature text.
private struct SignatureParser {
    let bytes: [UInt8]
    var index = 0

    mutating func parseAll() -> [DBusType]? {
        var types: [DBusType] = []
        while index < bytes.count {
            guard let type = parseOne(arrayDepth: 0, structDepth: 0) else { return nil }
            types.append(type)
        }
        return types
    }

    private mutating func parseOne(arrayDepth: Int, structDepth: Int) -> DBusType? {
        guard index < bytes.count else { return nil }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "a"):
            guard arrayDepth < 32, index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "{") {
                index += 1
                guard let key = parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth), key.isBasic,
                    let value = parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth),
                    index < bytes.count, bytes[index] == UInt8(ascii: "}")
                else { return nil }
                index += 1
                return .dictionary(key: key, value: value)
            }
            guard let element = parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth) else { return nil }
            return .array(element)
        case UInt8(ascii: "("):
            guard structDepth < 32 else { return nil }
            var fields: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                guard let field = parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1) else { return nil }
                fields.append(field)
            }
            guard index < bytes.count, !fields.isEmpty else { return nil }
            index += 1
            return .structure(fields)
        default:
            return DBusType.simple(code: code)
        }
    }
}
