import BlueZ
/// How many devices each client, and the gateway, may keep connected
/// (GatewayAPI's quota ledger). A keep takes a place before it stores
/// anything, so that two concurrent keeps cannot both take the last one.
public protocol KeptDeviceQuota: Sendable {
    /// Whether a place is held for `key` (changing a kept device's options
    /// takes no new place).
    func holds(_ key: AdapterDevice) -> Bool
    /// Takes a place for `owner`; `.limitReached` past its limit or the
    /// gateway's.
    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace
    /// The device was kept: the place is `key`'s.
    func assign(_ place: QuotaPlace, to key: AdapterDevice)
    /// The device was not kept: the place is given back.
    func cancel(_ place: QuotaPlace)
    /// The device is no longer kept: its place is freed (nothing if none).
    func release(_ key: AdapterDevice)
    /// A device restored at start-up counts against its stored owner (nil:
    /// recorded before owners were), whatever the limits.
    func restore(_ key: AdapterDevice, owner: String?)
}

/// A place taken in a quota for a resource being created.
public struct QuotaPlace: Sendable, Hashable {
    public let owner: String

    public init(owner: String) {
        self.owner = owner
    }
}
