import JSONValue

/// The options of a device kept on this gateway, as the state store keeps
/// them: a JSON object with `max_attempts` and `label` when given. Written
/// and read here only, so that what is stored and what is restored agree.
public struct KeptDeviceOptions: Sendable, Hashable {
    public var maxAttempts: Int?
    public var label: String?

    public init(maxAttempts: Int? = nil, label: String? = nil) {
        self.maxAttempts = maxAttempts
        self.label = label
    }

    /// Options stored earlier; what is not a JSON object, or a member of
    /// another kind, reads as absent.
    public init(stored bytes: [UInt8]) {
        guard case .object(let members)? = try? JSON.parse(bytes) else { return }
        if case .int(let value)? = members.first(where: { $0.0 == "max_attempts" })?.1 { maxAttempts = value }
        if case .string(let value)? = members.first(where: { $0.0 == "label" })?.1 { label = value }
    }

    /// The stored form.
    public var stored: [UInt8] {
        var members: [(String, JSON)] = maxAttempts.map { [("max_attempts", .int($0))] } ?? []
        if let label { members.append(("label", .string(label))) }
        return JSON.object(members).bytes
    }
}
