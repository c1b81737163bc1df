/// A node of a composed YAML document (aliases resolved), with the 1-based
/// line and column where it starts, so that every error about a scenario
/// can say where it is. Built by `YAMLNode.compose(_:)` over libyaml.
struct YAMLNode {
    enum Content {
        /// The scalar's text; `plain` when it was written without quotes or
        /// a block indicator (only plain scalars are read as booleans).
        case scalar(String, plain: Bool)
        case sequence([YAMLNode])
        /// Entries in document order.
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    var content: Content
    var line: Int
    var column: Int

    /// The scalar's text, whatever it looks like (`0x10`, `true` and `1.5`
    /// included); nil for a list or a mapping.
    var string: String? {
        guard case .scalar(let text, _) = content else { return nil }
        return text
    }

    /// A YAML 1.1 boolean, as Yams resolved them before: a plain `true`,
    /// `yes` or `on` (and their negations) in lower, capitalised or upper
    /// case. Quoted `"true"` is a string.
    var bool: Bool? {
        guard case .scalar(let text, plain: true) = content else { return nil }
        switch text {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return false
        default: return nil
        }
    }
}
