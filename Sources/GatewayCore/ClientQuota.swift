/// How many of one kind of thing each client, and the gateway, may hold:
/// kept devices (by `AdapterDevice`), standing subscriptions (by id), GATT
/// applications or advertisements (by id). GatewayAPI gives its quota
/// ledger, one per kind; without one there is no limit. A command takes a
/// place before it stores anything, so that two concurrent ones cannot
/// both take the last one.
public protocol ClientQuota<Key>: Sendable {
    /// What holds a place.
    associatedtype Key

    /// Whether a place is held for `key` (changing a kept device's options
    /// takes no new place).
    func holds(_ key: Key) -> Bool
    /// Takes a place for `owner`; `.limitReached` past its limit or the
    /// gateway's.
    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace
    /// It was created: the place is `key`'s.
    func assign(_ place: QuotaPlace, to key: Key)
    /// It was not created: the place is given back.
    func cancel(_ place: QuotaPlace)
    /// It is removed: its place is freed (nothing if none).
    func release(_ key: Key)
    /// Restored at start-up: counts against its stored owner (nil:
    /// recorded before owners were), whatever the limits.
    func restore(_ key: Key, owner: String?)
}
