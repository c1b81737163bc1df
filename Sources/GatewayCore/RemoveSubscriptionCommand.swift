/// Stop holding a standing subscription, and forget it.
public struct RemoveSubscriptionCommand: Sendable, Hashable {
    /// The subscription's id (the store's, or the core's without a store).
    public let id: Int64

    public init(id: Int64) {
        self.id = id
    }
}
