/// How much clients may create that lasts beyond their requests: kept
/// devices, standing subscriptions, peripheral applications and
/// advertisements. Each has a limit per client and a limit for the
/// whole gateway; past the first a request gets a 429 problem, past the
/// second a 507. The defaults are what a Raspberry Pi carries with its
/// start-up and shutdown under a second.
public struct Quotas: Sendable, Hashable {
    /// One resource's limits.
    public struct Limit: Sendable, Hashable {
        /// The most one client may hold; nil: only the total applies.
        public var perClient: Int?
        /// The most the gateway holds, all clients together.
        public var total: Int

        public init(perClient: Int?, total: Int) {
            self.perClient = perClient
            self.total = total
        }
    }

    public var keptDevices = Limit(perClient: 16, total: 32)
    public var standingSubscriptions = Limit(perClient: 128, total: 256)
    public var applications = Limit(perClient: 8, total: 16)
    /// bluetoothd's own limit (the controller's advertising instances,
    /// often 5) applies too.
    public var advertisements = Limit(perClient: 8, total: 16)

    public init() {}

    func limit(_ resource: QuotaLedger.Resource) -> Limit {
        switch resource {
        case .keptDevice: keptDevices
        case .standingSubscription: standingSubscriptions
        case .application: applications
        case .advertisement: advertisements
        }
    }
}
