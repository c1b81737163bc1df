import AsyncPrimitives
import BlueZ
import GatewayCore
import HTTPServer
import Logging
import PersistedState
import Synchronization

/// The REST + SSE API over a BlueZ central: routes, streams, errors.
///
/// ```swift
/// let gateway = Gateway(central: central, configuration: .init(apiKey: key))
/// // run GatewayCoreService(core: gateway.core, …), then:
/// gateway.start()
/// let server = Server(configuration: serverConfiguration, responder: gateway.router(), logger: logger)
/// ```
public final class Gateway: Sendable {
    public let central: Central
    public let configuration: GatewayConfiguration
    let logger: Logger
    /// The gateway-wide event sequence and replay buffer, which the core
    /// holds and publishes into.
    let log: EventLog<LoggedEvent>
    let streams = OpenStreams()
    /// The gauges `GET /metrics` sets from the central's activity.
    let activityGauges: ActivityGauges
    let outcomeCounters: OutcomeCounters
    /// Keeps the devices asked for (`PUT /v1/devices/{address}/keep`) connected.
    public let keeper: ConnectionKeeper
    /// The typed commands the routes and the MQTT bridge run.
    public let core: GatewayCore
    /// The standing subscriptions (`POST /v1/subscriptions`), which the
    /// core holds.
    var standing: StandingSubscriptions { core.standing }
    /// What each client holds, against `configuration.quotas`.
    let quotas: QuotaLedger
    /// Logs BlueZ becoming reachable or not.
    private let eventPump = StreamTask()
    /// The events of `GET /v1/peripheral/events`, which the core holds and
    /// feeds.
    let peripheralLog: EventLog<PeripheralEvent>
    /// The fleet behind `/v1/fleet/…` (attached by the launcher), and the
    /// log of its events, with ids this gateway assigns as they arrive.
    let fleetLink = Mutex(FleetLink())
    let fleetLog: EventLog<DescribedEvent>

    /// The state store, when the gateway keeps its state across restarts.
    let store: Store?

    /// A gateway over `central`; with `store`, its event log, kept
    /// connections and standing subscriptions are kept there.
    public init(
        central: Central, configuration: GatewayConfiguration = GatewayConfiguration(), store: Store? = nil,
        logger: Logger? = nil
    ) {
        self.central = central
        self.configuration = configuration
        self.store = store
        self.logger = logger ?? Logger(label: "blegateway.api")
        self.log = EventLog(
            capacity: configuration.replayBufferSize, store: store, encoding: JSONEventEncoding.gateway, logger: self.logger)
        self.activityGauges = ActivityGauges()
        self.keeper = ConnectionKeeper(central: central)
        let quotas = QuotaLedger(quotas: configuration.quotas)
        let peripheralLog = EventLog(capacity: configuration.replayBufferSize, encoding: JSONEventEncoding.peripheral)
        self.peripheralLog = peripheralLog
        let counters = OutcomeCounters()
        self.outcomeCounters = counters
        self.quotas = quotas
        self.core = GatewayCore(
            central: central, keeper: keeper, defaultAdapter: configuration.defaultAdapter,
            defaultTimeout: configuration.defaultTimeout, maximumTimeout: configuration.maximumTimeout,
            keptStore: store.map(StoredKeptDevices.init),
            keptQuota: LedgerQuota<AdapterDevice>(ledger: quotas, resource: .keptDevice),
            subscriptionStore: store.map(StoredSubscriptions.init),
            subscriptionQuota: LedgerQuota<Int64>(ledger: quotas, resource: .standingSubscription),
            publicationStore: store.map(StoredPublications.init),
            applicationQuota: LedgerQuota<String>(ledger: quotas, resource: .application),
            advertisementQuota: LedgerQuota<String>(ledger: quotas, resource: .advertisement),
            log: log, peripheralLog: peripheralLog, events: counters,
            pairingRequestTimeout: configuration.pairingRequestTimeout)
        self.fleetLog = EventLog(capacity: configuration.replayBufferSize)
    }

    /// Starts following BlueZ's reachability (for the log lines). The core
    /// runs apart (`GatewayCoreService`), started before this and stopped
    /// after `stop`.
    public func start() {
        let changes = central.events(.links, bufferSize: 256)
        eventPump.start { [logger] in
            for await event in changes {
                if case .availability(let availability) = event { Self.log(availability, to: logger) }
            }
        }
    }

    /// BlueZ became reachable or not: worth a line in the log either way.
    private static func log(_ availability: BlueZAvailability, to logger: Logger) {
        switch availability {
        case .available: logger.notice("BlueZ is reachable again")
        case .bluetoothdNotRunning, .busDisconnected:
            logger.error("BlueZ is unreachable: \(availability.detail); Bluetooth routes answer 503 until it is back")
        }
    }

    /// Ends every open stream with its last event and stops following
    /// BlueZ's reachability.
    public func stop() {
        eventPump.cancel()
        streams.finishAll()
    }

    /// The client a request's quotas count against.
    func client(_ request: Request) -> ClientID { ClientID(request, apiKey: configuration.apiKey) }

    /// Open event streams (scan, notification and event streams).
    public var openStreamCount: Int { streams.count }

    /// The configuration of an event stream's writer for `request`.
    func streamConfiguration(_ request: Request) throws(Problem) -> StreamConfiguration {
        try configuration.streamConfiguration(for: request)
    }

    /// The router with every route and the middleware (request ids, metrics,
    /// logging, CORS, API key).
    public func router() -> Router {
        var router = Router(errorResponses: .problems)
        router.use(RequestIdentity())
        router.use(RequestMetrics())
        router.use(RequestLogging(logger: logger))
        if !configuration.corsOrigins.isEmpty { router.use(CORSMiddleware(origins: configuration.corsOrigins)) }
        if let key = configuration.apiKey, !key.isEmpty {
            let openPaths = APIKeyMiddleware.defaultOpenPaths.union(ConsoleAssets.paths).union(WebBluetoothAssets.paths)
            router.use(APIKeyMiddleware(key: key, openPaths: openPaths))
        }
        addGatewayRoutes(to: &router)
        addObservabilityRoutes(to: &router)
        addWebBluetoothRoutes(to: &router)
        addAdapterRoutes(to: &router)
        addScanRoutes(to: &router)
        addDeviceRoutes(to: &router)
        addGATTRoutes(to: &router)
        addEventRoutes(to: &router)
        addPairingRoutes(to: &router)
        addKeepRoutes(to: &router)
        addSubscriptionRoutes(to: &router)
        addPeripheralRoutes(to: &router)
        addFleetRoutes(to: &router)
        addFleetNotificationRoutes(to: &router)
        return router
    }
}
