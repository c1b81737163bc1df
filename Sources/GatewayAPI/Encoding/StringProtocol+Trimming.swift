extension StringProtocol {
    /// The text without the leading and trailing characters that match:
    /// Foundation's `trimmingCharacters(in:)` for the gateway's own modules,
    /// which use FoundationEssentials (no ICU, and no CharacterSet tables).
    /// `text.trimming(where: \.isWhitespace)` trims spaces, tabs and line
    /// breaks; `{ $0.isWhitespace && !$0.isNewline }` spaces and tabs only.
    package func trimming(where predicate: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !predicate($0) }), let last = lastIndex(where: { !predicate($0) })
        else { return "" }
        return String(self[first...last])
    }
}
