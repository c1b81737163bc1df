/// A subscription this gateway holds for another gateway's notification
/// stream (`subscribe` with a `lease`): it lasts while that gateway renews
/// it, and ends at `expires` otherwise.
struct HeldLease: Sendable {
    /// The gateway that serves the stream (the lease id's first level).
    let servingGateway: String
    /// How long the lease lasts after each renewal.
    let ttl: Duration
    var expires: ContinuousClock.Instant

    /// The key of lease `id`'s subscription in `Bridge.subscriptions`,
    /// apart from every other one: Central counts each as one user of the
    /// characteristic, so ending it ends no other.
    static func key(_ id: String) -> String { "lease|\(id)" }
}
