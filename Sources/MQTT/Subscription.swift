/// A subscription made with `Client.subscribe`; pass it to
/// `Client.unsubscribe` to end it.
public struct Subscription: Sendable, Hashable {
    /// The topic filter (with `+` and `#` wildcards).
    public let filter: String
    let id: Int
}
