/// Which events a stream wants.
public struct EventFilter: Sendable, Hashable {
    /// Event types; nil means all.
    public var types: Set<String>?
    /// Only events about this device (canonical address); nil means any.
    public var device: String?

    public init(types: Set<String>? = nil, device: String? = nil) {
        self.types = types
        self.device = device
    }

    /// Whether the stream wants an event of `type` about `device`.
    public func matches(type: String, device: String?) -> Bool {
        if let types, !types.contains(type) { return false }
        if let wanted = self.device, device != wanted { return false }
        return true
    }
}
