/// A string that the D-Bus specification constrains (object paths, bus,
/// interface, member and error names).
///
/// Conforming types validate once, when they are made, so that a value of the
/// type is always safe to hand to libdbus (which aborts the process on an
/// invalid name rather than returning an error).
public protocol ValidatedName: RawRepresentable<String>, Sendable, Hashable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    /// What the name is, for error messages ("object path", "bus name", ...).
    static var kind: String { get }
    /// Whether `string` is valid for this kind of name.
    static func isValid(_ string: String) -> Bool
    /// Makes a name without validating it: only for strings libdbus has
    /// already validated, or that `isValid` has just accepted.
    init(unchecked string: String)
}

extension ValidatedName {
    public init?(rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.init(unchecked: rawValue)
    }

    /// Validates `string`, throwing `org.freedesktop.DBus.Error.InvalidArgs`
    /// when it is not a valid name of this kind.
    public init(_ string: String) throws(DBusError) {
        guard Self.isValid(string) else {
            throw DBusError(.invalidArgs, "invalid \(Self.kind) '\(string)'")
        }
        self.init(unchecked: string)
    }

    /// A literal name in the source. An invalid literal is a programming
    /// error and stops the program.
    public init(stringLiteral value: String) {
        precondition(Self.isValid(value), "invalid \(Self.kind) literal '\(value)'")
        self.init(unchecked: value)
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The character classes of the D-Bus specification's name grammars.
enum NameGrammar {
    static func isLetterOrUnderscore(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isWordCharacter(_ byte: UInt8) -> Bool { isLetterOrUnderscore(byte) || isDigit(byte) }

    /// Dot-separated elements of `[A-Za-z_][A-Za-z0-9_]*` (plus `-` when
    /// `allowHyphen`), at least two of them, at most 255 bytes: the shape of
    /// interface, error and well-known bus names.
    static func isDottedName(_ string: String, allowHyphen: Bool, allowLeadingDigit: Bool = false) -> Bool {
        let bytes = Array(string.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        var elements = 0
        var elementStart = true
        for byte in bytes {
            if byte == 0x2E {  // '.'
                if elementStart { return false }
                elementStart = true
                continue
            }
            let hyphen = allowHyphen && byte == 0x2D
            if elementStart {
                guard isLetterOrUnderscore(byte) || hyphen || (allowLeadingDigit && isDigit(byte)) else { return false }
                elements += 1
                elementStart = false
            } else {
                guard isWordCharacter(byte) || hyphen else { return false }
            }
        }
        return !elementStart && elements >= 2
    }
}
