/// A device kept connected by the fleet rather than by one gateway
/// (docs/fleet.md, "Kept by the fleet"): whichever gateway suits it best
/// holds the connection and the standing subscriptions, and another takes
/// over when that one loses it. Published retained on the broker, so every
/// gateway, including one that starts later, knows the wish.
public struct FleetKeep: Sendable, Hashable {
    /// A characteristic the holding gateway subscribes to, for as long as it
    /// holds the device (a standing subscription there).
    public struct Subscription: Sendable, Hashable {
        /// A UUID (canonical text) or `handle:N`.
        public var characteristic: String
        public var service: String?

        public init(characteristic: String, service: String? = nil) {
            self.characteristic = characteristic
            self.service = service
        }
    }

    /// Canonical address (`AA:BB:CC:DD:EE:FF`).
    public var address: String
    /// Only this gateway (`gateway`) or adapter (`gateway/adapter`) holds it.
    public var pin: String?
    /// This gateway holds it whenever it hears it, whatever the signal of
    /// the others.
    public var prefer: String?
    public var subscriptions: [Subscription]
    /// Failed attempts after which a holder gives the device up to another
    /// gateway (and is passed over for a while); nil for the fleet's default.
    public var maxAttempts: Int?
    public var label: String?

    public init(
        address: String, pin: String? = nil, prefer: String? = nil, subscriptions: [Subscription] = [],
        maxAttempts: Int? = nil, label: String? = nil
    ) {
        self.address = address
        self.pin = pin
        self.prefer = prefer
        self.subscriptions = subscriptions
        self.maxAttempts = maxAttempts
        self.label = label
    }

    /// The gateway part of `pin` (`hall` of `hall/hci1`).
    public var pinnedGateway: String? { pin.map { String($0.prefix { $0 != "/" }) } }
    /// The adapter part of `pin`, if it names one.
    public var pinnedAdapter: String? {
        guard let pin, let slash = pin.firstIndex(of: "/") else { return nil }
        return String(pin[pin.index(after: slash)...])
    }
}
