import MQTT

/// What the bridge publishes where.
public struct BridgeConfiguration: Sendable {
    /// This gateway's name in topics: `<topicPrefix>/<gatewayID>/…`. One MQTT
    /// topic level: no `/`, `+`, `#`.
    public var gatewayID: String
    /// The first topic level (`blegateway`).
    public var topicPrefix: String
    /// A device's advertisements are published at most this often (the
    /// latest one wins); scans report a device many times a second.
    public var advertisementInterval: Duration
    /// The QoS of characteristic values (notifications and reads). QoS 0 by
    /// default: a stream of readings where the next replaces a lost one.
    public var valueQoS: QoS
    /// Take part in the fleet: publish presence, follow the other gateways
    /// and take commands sent to `<topicPrefix>/any/cmd/…` (docs/mqtt.md).
    public var fleet: Bool
    /// A gateway waits this long per place in a request's ranking before it
    /// claims the request: the best placed claims at once, the next only if
    /// no claim has arrived by then.
    public var claimStep: Duration
    /// Presence is published again at most this often when the signal
    /// changes, and at least every `presenceRefresh` while the device is
    /// heard; presence older than `presenceFreshness` does not count.
    public var presenceMinimumInterval: Duration
    public var presenceRefresh: Duration
    public var presenceFreshness: Duration
    /// The winner of a device's latest claim goes first for the device's
    /// next requests for this long.
    public var claimHoldTime: Duration
    /// Fleet requests and claims are forgotten after this long.
    public var fleetRequestLifetime: Duration
    /// Fleet keeps (docs/fleet.md, "Kept by the fleet"): a gateway hears a
    /// device better than its holder by this many dB (moving averages)
    /// before the holder hands it over (habluetooth's 16 dB).
    public var roamMargin: Double
    /// A holder whose link has been down this long, and which has not
    /// heard the device since, gives it up to a gateway that hears it.
    public var roamLostAfter: Duration
    /// A holder gives a device up after this many failed attempts in a row
    /// (when the keep names no `max_attempts`) if another gateway hears it.
    public var roamFailedAttempts: Int
    /// A gateway that gave a device up (lost or failed) is passed over for
    /// it this long while another will do.
    public var roamPenalty: Duration
    /// Home Assistant MQTT discovery under this prefix (`homeassistant`),
    /// or nil for none.
    public var homeAssistant: String?
    /// Take commands on `<base>/cmd/…` (and, in a fleet, `<topicPrefix>/any/cmd/…`).
    /// Off by default: whoever may publish there drives the gateway, so the
    /// broker's access rules (and the API key, when set) must be in place.
    public var commands: Bool
    /// What commands may run at once, and wait beyond those: past both, a
    /// command is answered 503 at once. HTTP requests have their own
    /// connections and never wait behind MQTT commands.
    public var commandConcurrency: Int
    public var commandQueueLength: Int
    /// A command waits at most this long for its turn.
    public var commandQueueTimeout: Duration
    /// Larger command payloads are refused (413) unread; the HTTP body limit.
    public var commandPayloadLimit: Int
    /// Where presence comes from (with `fleet`): the gateway's scans, or a
    /// passive scan of the bridge's own.
    public var presenceSource: PresenceSource = .scans
    /// The time to live of the leases this gateway asks for when it serves
    /// a notification stream another gateway holds; it renews them every
    /// third of it (docs/fleet.md, "Notifications through the fleet").
    public var streamLeaseTime: Duration = .seconds(15)

    public init(
        gatewayID: String, topicPrefix: String = "blegateway", advertisementInterval: Duration = .seconds(1),
        valueQoS: QoS = .atMostOnce, fleet: Bool = true
    ) {
        self.gatewayID = gatewayID
        self.topicPrefix = topicPrefix
        self.advertisementInterval = advertisementInterval
        self.valueQoS = valueQoS
        self.fleet = fleet
        claimStep = .milliseconds(500)
        presenceMinimumInterval = .seconds(2)
        presenceRefresh = .seconds(20)
        presenceFreshness = .seconds(60)
        claimHoldTime = .seconds(30)
        fleetRequestLifetime = .seconds(300)
        roamMargin = 16
        roamLostAfter = .seconds(3)
        roamFailedAttempts = 3
        roamPenalty = .seconds(60)
        commands = false
        commandConcurrency = 16
        commandQueueLength = 256
        commandQueueTimeout = .seconds(30)
        commandPayloadLimit = 1 << 20
    }

    /// `<topicPrefix>/<gatewayID>`.
    public var base: String { "\(topicPrefix)/\(gatewayID)" }

    /// Answers go only to topics under this prefix (`blegateway/replies/`), so
    /// that a request cannot make the gateway publish on its own topics or
    /// anyone else's; a broker ACL can give each requester its own branch.
    public var replyTopicPrefix: String { "\(topicPrefix)/replies/" }
}
