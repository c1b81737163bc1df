/// What the core took up again at start-up from what the store held.
public struct Restoration: Sendable, Hashable {
    /// Devices kept connected again.
    public var keptDevices = 0
    /// Standing subscriptions held again.
    public var subscriptions = 0
    /// Stored kept connections skipped: their address is not one.
    public var unreadableAddresses: [String] = []

    public init() {}
}
