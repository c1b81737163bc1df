/// The quota of one kind of publication (GATT applications or
/// advertisements) per client, as the core counts it (GatewayAPI gives its
/// quota ledger; without one there is no limit).
public protocol PublicationQuota: Sendable {
    /// Takes a place for `owner`; `.limitReached` past its limit or the
    /// gateway's.
    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace
    /// It was published: the place is `id`'s.
    func assign(_ place: QuotaPlace, to id: String)
    /// It was not published: the place is given back.
    func cancel(_ place: QuotaPlace)
    /// It is withdrawn: its place is freed (nothing if none).
    func release(_ id: String)
    /// Published again at start-up: counts against its stored owner (nil:
    /// recorded before owners were), whatever the limits.
    func restore(_ id: String, owner: String?)
}
