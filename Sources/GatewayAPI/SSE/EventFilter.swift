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

    func matches(_ entry: EventLog.Entry) -> Bool {
        if let types, !types.contains(entry.type) { return false }
        if let device, entry.device != device { return false }
        return true
    }
}
