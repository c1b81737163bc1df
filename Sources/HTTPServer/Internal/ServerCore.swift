import Logging
import Synchronization

/// What MHD's callbacks need: the configuration, the responder, the
/// logger, and the requests in progress (so `stop` can end them all).
///
/// The daemon's callbacks receive it as an unretained pointer; the `Daemon`
/// keeps it alive until MHD_stop_daemon has returned.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let responder: any Responder
    let logger: Logger
    /// Set once by `stop`: new requests get 503, streams end, nothing suspends.
    let stopping = Atomic<Bool>(false)
    private let live = Mutex<[ObjectIdentifier: Exchange]>([:])
    /// The last line libmicrohttpd logged, for start-up error messages.
    let lastDaemonMessage = Mutex<String?>(nil)
    /// Ends streams whose client closed the connection while they were idle.
    let hangups = HangupWatcher()
    /// Connection counts, 503 refusals and request-head deadlines.
    let connections: ConnectionGuard
    /// Returns freed memory to the system after many connections closed.
    let reclaimer = MemoryReclaimer()
    /// The memory request bodies in flight may hold.
    let bodies: BodyBudget

    init(configuration: ServerConfiguration, responder: any Responder, logger: Logger) {
        self.configuration = configuration
        self.connections = ConnectionGuard(configuration: configuration)
        self.bodies = BodyBudget(
            total: configuration.requestBodyMemoryLimit, perClient: configuration.requestBodyMemoryLimitPerClient)
        self.responder = responder
        self.logger = logger
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func register(_ exchange: Exchange) {
        live.withLock { $0[ObjectIdentifier(exchange)] = exchange }
    }

    func unregister(_ exchange: Exchange) {
        _ = live.withLock { $0.removeValue(forKey: ObjectIdentifier(exchange)) }
    }

    /// The requests MHD has started and not yet reported complete.
    var liveExchanges: [Exchange] { live.withLock { Array($0.values) } }
    var liveCount: Int { live.withLock { $0.count } }

    /// The response for an error the transport detected.
    func errorResponse(_ error: HTTPError, request: Request?) -> Response {
        configuration.errorResponses.response(for: error, request: request)
    }
}
