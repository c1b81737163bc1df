/// One adapter's connection slots, for metrics and the adapter listing.
public struct AdapterSlots: Sendable, Hashable {
    public var adapter: String
    /// The adapter's limit (`Central.Options.slotLimits`).
    public var limit: Int
    /// Connected devices and connections being made through it.
    public var used: Int
    /// Connections waiting for a slot that this adapter could serve.
    public var queued: Int

    /// Slots left (never negative: devices connected by others may exceed
    /// the limit).
    public var free: Int { max(0, limit - used) }

    public init(adapter: String, limit: Int, used: Int, queued: Int) {
        self.adapter = adapter
        self.limit = limit
        self.used = used
        self.queued = queued
    }
}
