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
struct HTTPServerService: Service {
    let settings: Settings
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
        var configuration = ServerConfiguration(
            host: settings.listen.host, port: settings.listen.port, connectionLimit: settings.maxConnections,
            maxConnectionsPerClient: settings.maxConnectionsPerClient, requestHeaderTimeout: settings.requestHeaderTimeout)
        // The server's own refusals (413, 431, 503 while stopping) are
        // problems too.
        configuration.errorResponses = .problems
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
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
        let scheme = settings.tlsCertificate == nil ? "http" : "https"
        let port = server.port ?? settings.listen.port
        logger.notice("blegateway \(BLEGateway.version) listening on \(scheme)://\(SocketAddress(host: settings.listen.host, port: port))")
        if settings.apiKey == nil, !["127.0.0.1", "::1", "localhost"].contains(settings.listen.host) {
            logger.warning("listening beyond this machine without --api-key: anyone who can reach it can use your Bluetooth devices")
        }
        return server
    }
}
