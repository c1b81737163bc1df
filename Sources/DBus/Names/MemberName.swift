/// A method or signal name such as `ReadValue`: `[A-Za-z_][A-Za-z0-9_]*`, at
/// most 255 bytes.
public struct MemberName: ValidatedName {
    public static let kind = "member name"

    public let rawValue: String

    public init(unchecked string: String) { rawValue = string }

    public static func isValid(_ string: String) -> Bool {
        let bytes = string.utf8
        guard let first = bytes.first, bytes.count <= 255, NameGrammar.isLetterOrUnderscore(first) else {
            return false
        }
        return bytes.allSatisfy(NameGrammar.isWordCharacter)
    }
}
