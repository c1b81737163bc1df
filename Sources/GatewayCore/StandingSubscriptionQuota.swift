/// How many standing subscriptions each client, and the gateway, may hold
/// (GatewayAPI's quota ledger). A creation takes a place before it stores
/// anything, so that two concurrent ones cannot both take the last one.
public protocol StandingSubscriptionQuota: Sendable {
    /// Takes a place for `owner`; `.limitReached` past its limit or the
    /// gateway's.
    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace
    /// The subscription was created: the place is `id`'s.
    func assign(_ place: QuotaPlace, to id: Int64)
    /// The subscription was not created: the place is given back.
    func cancel(_ place: QuotaPlace)
    /// The subscription is removed: its place is freed (nothing if none).
    func release(_ id: Int64)
    /// A subscription restored at start-up counts against its stored
    /// owner (nil: recorded before owners were), whatever the limits.
    func restore(_ id: Int64, owner: String?)
}
