import BlueZ
import HTTPServer
import Logging
import Synchronization

/// The REST + SSE API over a BlueZ central: routes, streams, errors.
///
/// ```swift
/// let gateway = Gateway(central: central, configuration: .init(apiKey: key))
/// gateway.start()
/// let server = Server(configuration: serverConfiguration, responder: gateway.router(), logger: logger)
/// ```
public final class Gateway: Sendable {
    public let central: Central
    public let configuration: GatewayConfiguration
    let logger: Logger
    /// The gateway-wide event sequence and replay buffer.
    let log: EventLog
    let streams = OpenStreams()
    let notifications: NotificationHub
    let pairingRequests: PairingRequests
    private let eventPump = StreamTask()
    /// The gauges `GET /metrics` sets from the central's activity.
    let activityGauges: ActivityGauges

    public init(central: Central, configuration: GatewayConfiguration = GatewayConfiguration(), logger: Logger? = nil) {
        self.central = central
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "blegateway.api")
        self.log = EventLog(capacity: configuration.replayBufferSize)
        self.notifications = NotificationHub()
        self.activityGauges = ActivityGauges()
        self.pairingRequests = PairingRequests(log: log, deadline: configuration.pairingRequestTimeout)
    }

    /// Starts feeding the central's events into the event log.
    public func start() {
        let events = central.events(bufferSize: 16_384)
        eventPump.start { [log, logger] in
            for await event in events {
                if case .availability(let availability) = event { Self.log(availability, to: logger) }
                GatewayEvent(event).publish(to: log)
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

    /// Ends every open stream and stops following the central's events.
    public func stop() {
        eventPump.cancel()
        streams.finishAll()
    }

    /// Open event streams (scan, notification and event streams).
    public var openStreamCount: Int { streams.count }

    /// The configuration of every event stream's writer.
    var streamConfiguration: StreamConfiguration {
        StreamConfiguration(
            heartbeatInterval: configuration.heartbeatInterval, maxBufferedBytes: configuration.streamBufferBytes)
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
            router.use(APIKeyMiddleware(key: key, openPaths: APIKeyMiddleware.defaultOpenPaths.union(ConsoleAssets.paths)))
        }
        addGatewayRoutes(to: &router)
        addObservabilityRoutes(to: &router)
        addAdapterRoutes(to: &router)
        addScanRoutes(to: &router)
        addDeviceRoutes(to: &router)
        addGATTRoutes(to: &router)
        addEventRoutes(to: &router)
        addPairingRoutes(to: &router)
        return router
    }
}
