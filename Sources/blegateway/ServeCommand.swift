import ArgumentParser
import DBus
import Foundation
import Logging
import ServiceLifecycle

/// `blegateway serve`: the gateway.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the REST + SSE API.",
        discussion: """
            Every option can also be set in the environment (shown in brackets); the command line wins.

            Examples:
              blegateway serve --simulate                     a demo on the built-in simulator
              blegateway serve --simulate my-devices.yaml     the simulator with your scenario
              blegateway serve --listen 0.0.0.0:8080 --api-key "$(cat key)"
              blegateway serve --tls-cert cert.pem --tls-key key.pem --cors-origin https://app.example

            Stop with Ctrl-C (SIGINT) or SIGTERM: every open stream gets its last event, then scans, \
            subscriptions and connections the gateway started are ended before it exits.

            When bluetoothd or the bus goes away, the gateway keeps serving: GET /health answers 503 \
            saying what is missing, Bluetooth routes answer 503 (bluetoothd-unavailable), streams are \
            told, and it reconnects to the bus by itself (backoff up to 5 s) and resumes scans and \
            subscriptions.
            """)

    @Option(
        help: ArgumentHelp(
            "Where to listen: HOST:PORT, [IPV6]:PORT or PORT. [BLEGATEWAY_LISTEN]",
            discussion: "The default 127.0.0.1:8080 reaches only this machine; 0.0.0.0:8080 opens it to the network.",
            valueName: "address"))
    var listen: String?

    @Option(help: ArgumentHelp("The adapter used when a request names none (default: BlueZ's first). [BLEGATEWAY_ADAPTER]", valueName: "hciN"))
    var adapter: String?

    @Option(
        name: .customLong("api-key"),
        help: ArgumentHelp(
            "Require 'Authorization: Bearer KEY' on every route but /health. [BLEGATEWAY_API_KEY]",
            valueName: "key"))
    var apiKey: String?

    @Option(
        name: .customLong("api-key-file"),
        help: ArgumentHelp("Read the API key from a file (for container secrets).", valueName: "path"))
    var apiKeyFile: String?

    @Option(
        name: .customLong("cors-origin"),
        help: ArgumentHelp(
            "Allow browser pages from this origin (repeat for several; * for any). [BLEGATEWAY_CORS_ORIGINS, comma-separated]",
            valueName: "origin"))
    var corsOrigins: [String] = []

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve HTTPS with this PEM certificate (needs --tls-key).", valueName: "path"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "path"))
    var tlsKey: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "trace, debug, info, notice, warning, error or critical (default info). [BLEGATEWAY_LOG_LEVEL]",
            valueName: "level"))
    var logLevel: String?

    @Option(
        help: ArgumentHelp(
            "The bus where bluetoothd lives: system, session, or a D-Bus address. [BLEGATEWAY_BUS]",
            discussion: "The default, the system bus, honours DBUS_SYSTEM_BUS_ADDRESS.",
            valueName: "bus"))
    var bus: String?

    @Option(
        help: ArgumentHelp(
            "Run on the built-in BlueZ simulator (on a private bus) instead of bluetoothd; optionally with a scenario file.",
            discussion: "See docs/scenarios.md for the scenario format.",
            valueName: "scenario"))
    var simulate: String?

    @Option(
        name: .customLong("heartbeat-interval"),
        help: ArgumentHelp(
            "Seconds between the comment heartbeats of event streams.",
            discussion: "They keep proxies with short idle timeouts open, and reveal a client whose host vanished without closing its connection (a client that closes is noticed at once)."))
    var heartbeatInterval: Double = 15

    @Option(name: .customLong("replay-buffer"), help: "How many past events GET /v1/events can replay.")
    var replayBuffer = 4096

    @Option(name: .customLong("max-connections"), help: "The most HTTP connections served at once (streams included).")
    var maxConnections = 1024

    @Option(
        name: .customLong("max-connections-per-client"),
        help: ArgumentHelp(
            "The most HTTP connections one client address may hold at once (0 for no limit).",
            discussion: "Loopback counts like any address; behind a reverse proxy every client has the proxy's address. Past this, or past --max-connections, a new connection is answered 503 at once rather than left waiting."))
    var maxConnectionsPerClient = 128

    @Option(
        name: .customLong("request-header-timeout"),
        help: ArgumentHelp(
            "Seconds a client has to send a request's headers before its connection is closed.",
            discussion: "Counted from the connection's start (or the previous response on a kept-alive connection), however slowly bytes arrive. Open event streams are not affected."))
    var requestHeaderTimeout: Double = 10

    @Option(
        name: .customLong("presence-timeout"),
        help: ArgumentHelp(
            "Seconds a scan stream waits without hearing a device before it reports the device lost (0: only when bluetoothd removes it).",
            discussion: "bluetoothd keeps a device it stopped hearing for TemporaryTimeout (30 s), and a paired one for ever; this reports it sooner. Make it several advertising intervals long. A request's presence_timeout_ms overrides it."))
    var presenceTimeout: Double = 0

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        if apiKey != nil, apiKeyFile != nil {
            throw ValidationError("give --api-key or --api-key-file, not both")
        }
        guard presenceTimeout == 0 || (0.1...86_400).contains(presenceTimeout) else {
            throw ValidationError("--presence-timeout must be 0 or 0.1 to 86400 seconds")
        }
        guard (0.05...3600).contains(heartbeatInterval) else {
            throw ValidationError("--heartbeat-interval must be 0.05 to 3600 seconds")
        }
        guard (1...1_000_000).contains(replayBuffer) else { throw ValidationError("--replay-buffer must be 1 to 1000000") }
        guard (16...100_000).contains(maxConnections) else { throw ValidationError("--max-connections must be 16 to 100000") }
        guard (0...100_000).contains(maxConnectionsPerClient) else {
            throw ValidationError("--max-connections-per-client must be 0 to 100000")
        }
        guard (1...3600).contains(requestHeaderTimeout) else {
            throw ValidationError("--request-header-timeout must be 1 to 3600 seconds")
        }
    }

    func run() async throws {
        let settings = try Settings(self, environment: ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        let logger = Logger(label: "blegateway")
        let services: [any Service]
        do {
            services = try await GatewayLauncher.services(settings, logger: logger)
        } catch {
            logger.critical("\(error.message)")
            throw ExitCode(2)
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}
