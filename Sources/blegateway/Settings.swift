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
import PersistedState

/// The serve command's options (the environment's values among them)
/// checked and made into the values the gateway uses.
struct Settings {
    /// The API's configuration; the metrics exposition is the program's.
    var api: GatewayConfiguration
    /// Where and how the HTTP server listens; TLS is read when it starts.
    var server: ServerConfiguration
    var central = Central.Options()
    var agent: PairingAgent.Configuration
    /// The PEM files of `--tls-cert` and `--tls-key`, read when the server starts.
    var tlsCertificate: String?
    var tlsKey: String?
    var logLevel: Logger.Level
    var logFormat: LogFormat
    var bus: BusAddress
    /// nil: the real bluetoothd; `SimulateArgument.builtIn` or a scenario path.
    var simulate: String?
    /// nil without `--mqtt`.
    var mqtt: MQTTSettings?
    /// Where the state store lives; nil: a fresh temporary directory
    /// (`--simulate` without `--state-dir`).
    var stateDirectory: String?
    /// `--no-state`: no store at all; everything lives in memory only.
    var keepsState = true
    /// `--state-durability`: how hard the store syncs.
    var stateDurability = StoreOptions.Durability.full

    /// The state directory when neither `--state-dir` nor the environment
    /// names one and the gateway runs on bluetoothd.
    static let defaultStateDirectory = "/var/lib/blegateway"

    /// The command's options, the environment's values among them (see
    /// `ServeOption.environmentArguments`), checked and made into the
    /// values the gateway uses.
    init(_ command: ServeCommand) throws {
        guard let listen = SocketAddress(parsing: command.listen) else {
            throw ValidationError("--listen must be HOST:PORT, [IPV6]:PORT or PORT, not '\(command.listen)'")
        }
        if let adapter = command.adapter, !AdapterName.isValid(adapter) {
            throw ValidationError("--adapter must be an adapter name such as hci0, not '\(adapter)'")
        }
        if let list = command.useAdapters {
            let names = list.split(separator: ",").map { String($0).trimming(where: \.isWhitespace) }
            guard !names.isEmpty, names.allSatisfy(AdapterName.isValid) else {
                throw ValidationError("--use-adapters must list adapter names such as hci0,hci1, not '\(list)'")
            }
            if let adapter = command.adapter, !names.contains(adapter) {
                throw ValidationError("--adapter \(adapter) is not among --use-adapters \(list)")
            }
            central.adapterScope = AdapterScope(adapters: Set(names))
        }
        if let slots = command.connectionSlots {
            do {
                central.slotLimits = try SlotLimits(parsing: slots)
            } catch {
                throw ValidationError("--connection-slots: \(error.message)")
            }
        }
        central.notifyPath = NotifyPath(rawValue: command.notifyPath) ?? .acquire
        var apiKey = command.apiKey
        if let path = command.apiKeyFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read the API key file \(path)")
            }
            apiKey = text.trimming(where: \.isWhitespace)
        }
        if apiKey?.isEmpty == true { apiKey = nil }
        api = GatewayConfiguration(
            version: BLEGateway.version, apiKey: apiKey, corsOrigins: Set(command.corsOrigins), defaultAdapter: command.adapter,
            simulated: command.simulate != nil, replayBufferSize: command.replayBuffer,
            heartbeatInterval: .milliseconds(Int(command.heartbeatInterval * 1000)))
        api.maximumStreamBufferBytes = command.streamBufferMax * 1024
        api.pairingRequestTimeout = .milliseconds(Int(command.pairingRequestTimeout * 1000))
        api.presenceTimeout = command.presenceTimeout > 0 ? .milliseconds(Int(command.presenceTimeout * 1000)) : nil
        api.quotas = try command.quotas.quotas()
        server = ServerConfiguration(
            host: listen.host, port: listen.port, connectionLimit: command.maxConnections,
            maxConnectionsPerClient: command.maxConnectionsPerClient,
            requestHeaderTimeout: .milliseconds(Int(command.requestHeaderTimeout * 1000)))
        // The server's own refusals (413, 431, 503 while stopping) are
        // problems too.
        server.errorResponses = .problems
        agent = PairingAgent.Configuration(
            capability: AgentCapability(name: command.agentCapability) ?? .noInputNoOutput, isDefault: command.defaultAgent)
        tlsCertificate = command.tlsCertificate
        tlsKey = command.tlsKey
        guard let level = Logger.Level(rawValue: command.logLevel.lowercased()) else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical, not '\(command.logLevel)'")
        }
        logLevel = level
        guard let format = LogFormat(rawValue: command.logFormat.lowercased()) else {
            throw ValidationError("--log-format must be text or json, not '\(command.logFormat)'")
        }
        logFormat = format
        switch command.bus {
        case "system": bus = .system
        case "session": bus = .session
        case let address: bus = .address(address)
        }
        simulate = command.simulate
        stateDirectory = command.stateDirectory
        if let directory = stateDirectory, directory.isEmpty {
            throw ValidationError("--state-dir must name a directory")
        }
        if command.noState {
            if command.stateDirectory != nil { throw ValidationError("--no-state and --state-dir exclude each other") }
            keepsState = false
            stateDirectory = nil
        }
        if stateDirectory == nil, simulate == nil, keepsState { stateDirectory = Self.defaultStateDirectory }
        guard let durability = StoreOptions.Durability(rawValue: command.stateDurability.lowercased()) else {
            throw ValidationError("--state-durability must be full or normal, not '\(command.stateDurability)'")
        }
        stateDurability = durability
        mqtt = try MQTTSettings(command.mqtt)
    }

    /// Where the server listens.
    var listen: SocketAddress { SocketAddress(host: server.host, port: server.port) }
}

/// How log lines are written to standard error.
enum LogFormat: String {
    /// swift-log's text lines.
    case text
    /// One JSON object per line.
    case json
}
