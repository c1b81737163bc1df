import BlueZ
import GatewayAPI
import HTTPServer
import Logging
import ServiceLifecycle

/// The HTTP server, listening once everything behind it has started (the
/// API restored, the pairing agent asked for, the MQTT bridge's fleet
/// attached), so that its first request finds the gateway whole. An
/// address that cannot be used stops the start. On shutdown (after the API
/// ended its streams) refuses new requests, lets what is queued drain for
/// up to `gracePeriod`, and closes.
struct HTTPServerService: GatewayService {
    let configuration: ServerConfiguration
    /// `--tls-cert` and `--tls-key`, read as the server starts.
    let tlsCertificate: String?
    let tlsKey: String?
    /// Whether requests need the API key (said at start when the server
    /// listens beyond this machine without one).
    let apiKeySet: Bool
    let handoffs: Handoffs
    let logger: Logger
    var gracePeriod: Duration = .seconds(5)

    func run() async throws {
        let gateway: Gateway
        do {
            gateway = try await handoffs.gateway.take()
            try await handoffs.agent.take()
            let bridge = try await handoffs.bridge.take()
            let stateMetrics = StateMetrics(
                central: try await handoffs.central.take(), mqtt: bridge?.client, store: try await handoffs.store.take())
            MetricsBackend.readBeforeEachScrape { stateMetrics.update() }
        } catch {
            return
        }
        let server = try start(responder: gateway.router())
        try? await gracefulShutdown()
        await server.stop(gracePeriod: gracePeriod)
    }

    private func start(responder: Router) throws(StartupError) -> Server {
        var configuration = self.configuration
        if let certificate = tlsCertificate, let key = tlsKey {
            do {
                configuration.tls = try TLSConfiguration(certificateFile: certificate, privateKeyFile: key)
            } catch {
                throw StartupError("cannot use the TLS certificate and key: \(error)")
            }
        }
        let server = Server(configuration: configuration, responder: responder, logger: logger)
        do {
            try server.start()
        } catch {
            throw StartupError("\(error.message). Is another gateway running? Choose another address with --listen.")
        }
        let scheme = tlsCertificate == nil ? "http" : "https"
        let port = server.port ?? configuration.port
        logger.notice("blegateway \(BLEGateway.version) listening on \(scheme)://\(SocketAddress(host: configuration.host, port: port))")
        if !apiKeySet, !["127.0.0.1", "::1", "localhost"].contains(configuration.host) {
            logger.warning("listening beyond this machine without --api-key: anyone who can reach it can use your Bluetooth devices")
        }
        return server
    }
}
