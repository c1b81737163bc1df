import PersistedState

/// What the core took up again at start-up from what the store held.
public struct Restoration: Sendable, Hashable {
    /// A stored publication the core could not take up as it was.
    public struct Publication: Sendable, Hashable {
        public let kind: PublishedItem.Kind
        public let id: String
        public let adapter: String
        /// Why: the definition cannot be read, or bluetoothd refused it.
        public let reason: String
    }

    /// Devices kept connected again.
    public var keptDevices = 0
    /// Standing subscriptions held again.
    public var subscriptions = 0
    /// Stored kept connections skipped: their address is not one.
    public var unreadableAddresses: [String] = []
    /// GATT applications and advertisements published again.
    public var applications = 0
    public var advertisements = 0
    /// Stored publications skipped: this gateway cannot read their
    /// definition.
    public var unreadablePublications: [Publication] = []
    /// Publications taken up but not registered yet (BlueZ not running
    /// yet, say): registered when BlueZ becomes available.
    public var unregisteredPublications: [Publication] = []

    public init() {}
}
