import ArgumentParser
import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import Logging
import ServiceLifecycle

/// `blegateway serve`: the gateway.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the REST + SSE API.",
        discussion: """
            Every option can also be set in the environment (shown in brackets); the command line wins.

            Open http://127.0.0.1:8080/ in a browser for the web console; GET /metrics is in the \
            Prometheus text format.

            Examples:
              blegateway serve --simulate                     a demo on the built-in simulator
              blegateway serve --simulate my-devices.yaml     the simulator with your scenario
              blegateway serve --listen 0.0.0.0:8080 --api-key "$(cat key)"
              blegateway serve --tls-cert cert.pem --tls-key key.pem --cors-origin https://app.example
              blegateway serve --mqtt mqtt://broker.lan --gateway-id hall

            Stop with Ctrl-C (SIGINT) or SIGTERM: every open stream gets its last event, then scans, \
            subscriptions and connections the gateway started are ended (but kept devices, which stay \
            connected) and the state store is closed before it exits. Kept connections \
            (PUT /v1/devices/ADDRESS/keep), standing subscriptions (POST /v1/subscriptions) and the event \
            log of GET /v1/events live in --state-dir and are restored at start: event ids go on across \
            restarts, and a client resuming with Last-Event-ID gets what it missed.

            When bluetoothd or the bus goes away, the gateway keeps serving: GET /health answers 503 \
            saying what is missing, Bluetooth routes answer 503 (bluetoothd-unavailable), streams are \
            told, and it reconnects to the bus by itself (backoff up to 5 s) and resumes scans and \
            subscriptions.
            """)

    @Option(
        .listen,
        help: ArgumentHelp(
            "Where to listen: HOST:PORT, [IPV6]:PORT or PORT.",
            discussion: "The default reaches only this machine; 0.0.0.0:8080 opens it to the network.",
            valueName: "address"))
    var listen = "127.0.0.1:8080"

    @Option(
        .adapter,
        help: ArgumentHelp(
            "The adapter used when a request names none (default: connect and keep pick the adapter that hears the device best with a free slot; the rest use BlueZ's first).",
            valueName: "hciN"))
    var adapter: String?

    @Option(
        .useAdapters,
        help: ArgumentHelp(
            "Use only these adapters (comma-separated: hci0,hci1); the others on the same bluetoothd are left alone.",
            discussion: "For an adapter another program uses (Home Assistant's Bluetooth, a second gateway): the gateway neither shows, scans with, connects through nor advertises on the others.",
            valueName: "hciN,…"))
    var useAdapters: String?

    @Option(
        .connectionSlots,
        help: ArgumentHelp(
            "Connections each adapter holds at once: N for every adapter, hciN=M for one (7,hci1=5).",
            discussion: """
                BlueZ does not expose a controller's connection limit, so it is set here (default 7; adapters hold 5 to 10). \
                A connection past the limit waits for a slot until its timeout, then fails with 503 and Retry-After.
                """,
            valueName: "limits"))
    var connectionSlots: String?

    @Option(
        .apiKey,
        help: ArgumentHelp(
            "Require 'Authorization: Bearer KEY' on every route but /health and the web console's files.",
            valueName: "key"))
    var apiKey: String?

    @Option(
        .apiKeyFile,
        help: ArgumentHelp("Read the API key from a file (for container secrets).", valueName: "path"))
    var apiKeyFile: String?

    @Option(
        .corsOrigin,
        help: ArgumentHelp(
            "Allow browser pages from this origin, such as a Web Bluetooth page loading /webbluetooth.js (repeat for several; * for any).",
            valueName: "origin"))
    var corsOrigins: [String] = []

    @Option(
        .tlsCert,
        help: ArgumentHelp(
            "Serve HTTPS (TLS 1.2 and 1.3, AEAD ciphers with forward secrecy, HSTS) with this PEM certificate (needs --tls-key).",
            valueName: "path"))
    var tlsCertificate: String?

    @Option(.tlsKey, help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "path"))
    var tlsKey: String?

    @Option(
        .logLevel,
        help: ArgumentHelp(
            "trace, debug, info, notice, warning, error or critical.",
            valueName: "level"))
    var logLevel = "info"

    @Option(
        .logFormat,
        help: ArgumentHelp(
            "text or json.",
            discussion: "json writes one JSON object per line (timestamp, level, label, message, metadata), for container log collectors. Every request's lines carry its request_id.",
            valueName: "format"))
    var logFormat = "text"

    @Option(
        .bus,
        help: ArgumentHelp(
            "The bus where bluetoothd lives: system, session, or a D-Bus address.",
            discussion: "The default, the system bus, honours DBUS_SYSTEM_BUS_ADDRESS.",
            valueName: "bus"))
    var bus = "system"

    @Option(
        .simulate,
        help: ArgumentHelp(
            "Run on the built-in BlueZ simulator (on a private bus) instead of bluetoothd; optionally with a scenario file.",
            discussion: "See docs/scenarios.md for the scenario format.",
            valueName: "scenario"))
    var simulate: String?

    @Option(
        .stateDir,
        help: ArgumentHelp(
            "Where the gateway keeps its state (default /var/lib/blegateway).",
            discussion: """
                Kept connections, standing subscriptions and the event log live there (blegateway.sqlite) and \
                are restored on the next start. The directory is created if missing and must be writable; only \
                one gateway may use it at a time. With --simulate and no --state-dir, a fresh temporary \
                directory is used and removed on exit, so a demo starts empty and remembers nothing.
                """,
            valueName: "path"))
    var stateDirectory: String?

    @Flag(
        .noState,
        help: ArgumentHelp(
            "Keep no state on disk.",
            discussion: """
                Kept connections, standing subscriptions and the event log live in memory only and end with \
                the process; nothing is written to disk (a read-only root, or an SD card to spare).
                """))
    var noState = false

    @Option(
        .stateDurability,
        help: ArgumentHelp(
            "How hard the state store syncs: full or normal.",
            discussion: """
                full (the default) syncs every commit to the disk: a kill -9 or a power loss loses at most the events \
                of the last few milliseconds. normal leaves the syncing to SQLite's checkpoints: what the gateway \
                acknowledged still survives a kill -9, but a power loss or a kernel crash may roll back the commits since \
                the last checkpoint (seconds to minutes of events, and recent keeps or subscriptions, which the start \
                then reports); it costs less CPU and disk wear per notification (BENCHMARKS.md has the figures).
                """,
            valueName: "full|normal"))
    var stateDurability = "full"

    @Option(
        .heartbeatInterval,
        help: ArgumentHelp(
            "Seconds between the comment heartbeats of event streams.",
            discussion: "They keep proxies with short idle timeouts open, and reveal a client whose host vanished without closing its connection (a client that closes is noticed at once)."))
    var heartbeatInterval: Double = 15

    @Option(.replayBuffer, help: "How many past events GET /v1/events can replay.")
    var replayBuffer = 4096

    @Option(
        .streamBufferMax,
        help: ArgumentHelp(
            "The most KiB an event stream may ask to hold for its client (?buffer_kib=).",
            discussion: "A stream holds at most 256 KiB its client has not read, then drops the client; a client that must not lose values through a stall of its own asks for more, up to this. The buffer grows only with what is unread.",
            valueName: "KIB"))
    var streamBufferMax = 16384

    @Option(.maxConnections, help: "The most HTTP connections served at once (streams included).")
    var maxConnections = 1024

    @Option(
        .maxConnectionsPerClient,
        help: ArgumentHelp(
            "The most HTTP connections one client address may hold at once (0 for no limit).",
            discussion: "Loopback counts like any address; behind a reverse proxy every client has the proxy's address. Past this, or past --max-connections, a new connection is answered 503 at once rather than left waiting."))
    var maxConnectionsPerClient = 128

    @OptionGroup(title: "Quotas")
    var quotas: QuotaOptions

    @Option(
        .requestHeaderTimeout,
        help: ArgumentHelp(
            "Seconds a client has to send a request's headers before its connection is closed.",
            discussion: "Counted from the connection's start (or the previous response on a kept-alive connection), however slowly bytes arrive. Open event streams are not affected."))
    var requestHeaderTimeout: Double = 10

    @Option(
        .agentCapability,
        help: ArgumentHelp(
            "The pairing agent's IO capability: NoInputNoOutput, DisplayOnly, DisplayYesNo, KeyboardOnly or KeyboardDisplay.",
            discussion: "NoInputNoOutput pairs by Just Works only, with no question to answer. The others let bluetoothd ask for passkeys and confirmations, which the gateway publishes as pairing-request events for a client to answer (POST /v1/pairing-requests/{id})."))
    var agentCapability = "NoInputNoOutput"

    @Flag(
        .defaultAgent,
        help: ArgumentHelp(
            "Make the gateway's agent bluetoothd's default agent (on by default).",
            discussion: "The default agent answers pairing that the device or another program starts, not only the gateway's own. Turn it off when a desktop's agent should keep that role."))
    var defaultAgent = true

    @Option(
        .pairingRequestTimeout,
        help: "Seconds a pairing request waits for a client's answer before the gateway rejects it.")
    var pairingRequestTimeout: Double = 60

    @OptionGroup(title: "MQTT")
    var mqtt: MQTTOptions

    @Option(
        .notifyPath,
        help: ArgumentHelp(
            "How notifications are taken from bluetoothd: acquire or start-notify.",
            discussion: "acquire (the default) uses AcquireNotify where bluetoothd offers it: each value arrives as one packet on a socket instead of a D-Bus signal; indications, and characteristics another program already subscribed to, use StartNotify. start-notify always uses StartNotify (each value a PropertiesChanged signal). BENCHMARKS.md compares them."))
    var notifyPath = NotifyPath.acquire.rawValue

    @Option(
        .presenceTimeout,
        help: ArgumentHelp(
            "Seconds a scan stream waits without hearing a device before it reports the device lost (0: only when bluetoothd removes it).",
            discussion: "bluetoothd keeps a device it stopped hearing for TemporaryTimeout (30 s), and a paired one for ever; this reports it sooner. Make it several advertising intervals long. A request's presence_timeout_ms overrides it."))
    var presenceTimeout: Double = 0

    func validate() throws {
        guard NotifyPath(rawValue: notifyPath) != nil else {
            throw ValidationError(
                "--notify-path must be one of \(NotifyPath.allCases.map(\.rawValue).joined(separator: ", ")), not '\(notifyPath)'")
        }
        guard AgentCapability(name: agentCapability) != nil else {
            throw ValidationError(
                "--agent-capability must be one of \(AgentCapability.allCases.map(\.rawValue).joined(separator: ", ")), not '\(agentCapability)'")
        }
        guard (1...3600).contains(pairingRequestTimeout) else {
            throw ValidationError("--pairing-request-timeout must be 1 to 3600 seconds")
        }
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
        guard (256...4_194_304).contains(streamBufferMax) else {
            throw ValidationError("--stream-buffer-max must be 256 to 4194304 KiB")
        }
        guard (16...100_000).contains(maxConnections) else { throw ValidationError("--max-connections must be 16 to 100000") }
        guard (0...100_000).contains(maxConnectionsPerClient) else {
            throw ValidationError("--max-connections-per-client must be 0 to 100000")
        }
        guard (1...3600).contains(requestHeaderTimeout) else {
            throw ValidationError("--request-header-timeout must be 1 to 3600 seconds")
        }
    }

    @Flag(.printConfig, help: "Print the settings the options, the environment and the defaults make, and exit.")
    var printConfig = false

    func run() async throws {
        let settings = try Settings(self)
        if printConfig { return print(settings.summary) }
        Self.bootstrapLogging(settings)
        MetricsBackend.bootstrap()
        let logger = Logger(label: "blegateway")
        do {
            try await GatewayLauncher.serviceGroup(settings, logger: logger).run()
        } catch let error as StartupError {
            logger.critical("\(error.message)")
            throw ExitCode(2)
        }
        logger.info("stopped")
    }

    /// Text (swift-log's stream handler) or JSON lines on standard error,
    /// each line with the request id of the request it was written for.
    private static func bootstrapLogging(_ settings: Settings) {
        LoggingSystem.bootstrap(
            { label, provider in
                switch settings.logFormat {
                case .text:
                    var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
                    handler.logLevel = settings.logLevel
                    return handler
                case .json:
                    var handler = JSONLogHandler(label: label, metadataProvider: provider)
                    handler.logLevel = settings.logLevel
                    return handler
                }
            }, metadataProvider: .requestID)
    }
}
