import ArgumentParser
import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import HTTPServer
import Logging

/// The serve command's options with the environment's fallbacks applied
/// and checked.
struct Settings {
    var listen: SocketAddress
    var adapter: String?
    /// Connection slots per adapter (`--connection-slots`).
    var slotLimits = SlotLimits()
    var apiKey: String?
    var corsOrigins: Set<String>
    var tlsCertificate: String?
    var tlsKey: String?
    var logLevel: Logger.Level
    var logFormat: LogFormat
    var bus: BusAddress
    /// nil: the real bluetoothd; `SimulateArgument.builtIn` or a scenario path.
    var simulate: String?
    var replayBuffer: Int
    var streamBufferMax: Int
    var maxConnections: Int
    var maxConnectionsPerClient: Int
    var requestHeaderTimeout: Duration
    var heartbeatInterval: Duration
    var agentCapability: AgentCapability
    var defaultAgent: Bool
    var notifyPath: NotifyPath
    var pairingRequestTimeout: Duration

    /// nil without `--mqtt`.
    var mqtt: MQTTSettings?

    /// Where the state store lives; nil: a fresh temporary directory
    /// (`--simulate` without `--state-dir`).
    var stateDirectory: String?
    /// `--no-state`: no store at all; everything lives in memory only.
    var keepsState = true

    /// The state directory when neither `--state-dir` nor the environment
    /// names one and the gateway runs on bluetoothd.
    static let defaultStateDirectory = "/var/lib/blegateway"

    /// nil: devices are lost only when bluetoothd removes them.
    var presenceTimeout: Duration?

    var quotas: Quotas

    init(_ command: ServeCommand, environment: [String: String]) throws {
        let listenText = command.listen ?? environment["BLEGATEWAY_LISTEN"] ?? "127.0.0.1:8080"
        guard let listen = SocketAddress(parsing: listenText) else {
            throw ValidationError("--listen must be HOST:PORT, [IPV6]:PORT or PORT, not '\(listenText)'")
        }
        self.listen = listen
        adapter = command.adapter ?? environment["BLEGATEWAY_ADAPTER"]
        if let adapter, !AdapterName.isValid(adapter) {
            throw ValidationError("--adapter must be an adapter name such as hci0, not '\(adapter)'")
        }
        if let slots = command.connectionSlots ?? environment["BLEGATEWAY_CONNECTION_SLOTS"] {
            do {
                slotLimits = try SlotLimits(parsing: slots)
            } catch {
                throw ValidationError("--connection-slots: \(error.message)")
            }
        }
        if let path = command.apiKeyFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read the API key file \(path)")
            }
            apiKey = text.trimming(where: \.isWhitespace)
        } else {
            apiKey = command.apiKey ?? environment["BLEGATEWAY_API_KEY"]
        }
        if let apiKey, apiKey.isEmpty { self.apiKey = nil }
        var origins = Set(command.corsOrigins)
        if origins.isEmpty, let list = environment["BLEGATEWAY_CORS_ORIGINS"] {
            origins = Set(list.split(separator: ",").map { $0.trimming(where: { $0.isWhitespace && !$0.isNewline }) }.filter { !$0.isEmpty })
        }
        corsOrigins = origins
        tlsCertificate = command.tlsCertificate
        tlsKey = command.tlsKey
        let levelText = command.logLevel ?? environment["BLEGATEWAY_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical, not '\(levelText)'")
        }
        logLevel = level
        let formatText = command.logFormat ?? environment["BLEGATEWAY_LOG_FORMAT"] ?? "text"
        guard let format = LogFormat(rawValue: formatText.lowercased()) else {
            throw ValidationError("--log-format must be text or json, not '\(formatText)'")
        }
        logFormat = format
        switch command.bus ?? environment["BLEGATEWAY_BUS"] ?? "system" {
        case "system": bus = .system
        case "session": bus = .session
        case let address: bus = .address(address)
        }
        simulate = command.simulate
        stateDirectory = command.stateDirectory ?? environment["BLEGATEWAY_STATE_DIR"]
        if let directory = stateDirectory, directory.isEmpty {
            throw ValidationError("--state-dir must name a directory")
        }
        if command.noState {
            if command.stateDirectory != nil { throw ValidationError("--no-state and --state-dir exclude each other") }
            keepsState = false
            stateDirectory = nil
        }
        if stateDirectory == nil, simulate == nil, keepsState { stateDirectory = Self.defaultStateDirectory }
        replayBuffer = command.replayBuffer
        streamBufferMax = command.streamBufferMax * 1024
        heartbeatInterval = .milliseconds(Int(command.heartbeatInterval * 1000))
        maxConnections = command.maxConnections
        maxConnectionsPerClient = command.maxConnectionsPerClient
        requestHeaderTimeout = .milliseconds(Int(command.requestHeaderTimeout * 1000))
        agentCapability = AgentCapability(name: command.agentCapability) ?? .noInputNoOutput
        notifyPath = NotifyPath(rawValue: command.notifyPath) ?? .acquire
        defaultAgent = command.defaultAgent
        pairingRequestTimeout = .milliseconds(Int(command.pairingRequestTimeout * 1000))

        mqtt = try MQTTSettings(command.mqtt, environment: environment)
        quotas = try command.quotas.quotas(environment: environment)

        presenceTimeout = command.presenceTimeout > 0 ? .milliseconds(Int(command.presenceTimeout * 1000)) : nil
    }
}

/// How log lines are written to standard error.
enum LogFormat: String {
    /// swift-log's text lines.
    case text
    /// One JSON object per line.
    case json
}
