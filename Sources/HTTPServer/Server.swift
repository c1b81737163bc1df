import Logging
import Synchronization

/// An HTTP/1.1 server over libmicrohttpd that runs a `Responder` (usually a
/// `Router`) for every request.
///
/// Handlers are async and run on tasks; while one runs, its connection is
/// suspended, so slow handlers hold no thread. Responses are complete
/// bodies or streams fed by a `StreamWriter` (Server-Sent Events).
///
/// ```swift
/// var router = Router()
/// router.get("/health") { _ in .text("ok\n") }
/// let server = Server(configuration: ServerConfiguration(host: "::", port: 0), responder: router)
/// try server.start()
/// print("listening on port", server.port ?? 0)
/// // ... later, for example on SIGTERM:
/// await server.stop()
/// ```
public final class Server: Sendable {
    enum Phase {
        case idle
        case running(Daemon)
        case stopping
        case stopped
    }

    /// The configuration the server was made with.
    public let configuration: ServerConfiguration
    private let core: ServerCore
    let phase = Mutex(Phase.idle)

    /// A server that will answer with `responder`; `start()` binds it.
    public init(
        configuration: ServerConfiguration = ServerConfiguration(),
        responder: some Responder,
        logger: Logger = Logger(label: "blegateway.http")
    ) {
        self.configuration = configuration
        self.core = ServerCore(configuration: configuration, responder: responder, logger: logger)
    }

    /// Binds the address and starts serving on libmicrohttpd's thread.
    /// A server starts once; after `stop()` make a new one.
    public func start() throws(ServerError) {
        try phase.withLock { (phase) throws(ServerError) -> Void in
            guard case .idle = phase else { throw ServerError(.alreadyStarted, "the server was already started") }
            let daemon: Daemon
            do throws(ServerError) {
                daemon = try Daemon(core: core)
            } catch {
                core.logger.error("cannot start", metadata: ["error": "\(error)"])
                throw error
            }
            phase = .running(daemon)
            core.logger.info("listening", metadata: [
                "host": "\(configuration.host)", "port": "\(daemon.port)", "tls": "\(configuration.tls != nil)",
            ])
        }
    }

    /// The bound port while running (the real one when configured with 0).
    public var port: Int? {
        phase.withLock { phase in
            if case .running(let daemon) = phase { return daemon.port }
            return nil
        }
    }

    /// Whether the server is accepting requests.
    public var isRunning: Bool {
        phase.withLock { phase in
            if case .running = phase { return true }
            return false
        }
    }

    /// Requests in progress, open streams included.
    public var activeRequestCount: Int { core.liveCount }

    /// Memory held now by request bodies in flight (see
    /// `ServerConfiguration.requestBodyMemoryLimit`).
    public var requestBodyBytesHeld: Int { core.bodies.held }

    /// Connections open now, idle ones and those being refused included.
    public var openConnectionCount: Int { core.connections.openCount }

    deinit {
        // Stopped without `stop()`: end at once rather than leave MHD's
        // thread calling into freed objects.
        if case .running(let daemon) = phase.withLock({ $0 }) {
            Self.halt(core: core, daemon: daemon)
        }
    }
}
