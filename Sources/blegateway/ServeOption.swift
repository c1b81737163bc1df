import GatewayAPI

/// The options of `serve`, each named once: its case is its flag, from
/// which its environment variable follows (`--max-connections` is
/// `BLEGATEWAY_MAX_CONNECTIONS`). Its property, declared with
/// `@Option(.flag, help:)` in `ServeCommand` or one of its option groups,
/// gives its type, its default and its help, to which the variable is
/// added. The environment reaches the parser as arguments (see
/// `environmentArguments`), so that the command line, the environment
/// and the defaults are combined, parsed and checked in one way.
///
/// A new option: a case here (with its kind if it is a flag), its
/// property, and the line of `Settings` that puts its value into the
/// configuration it sets (plus a `--print-config` line if it should show).
enum ServeOption: String, CaseIterable {
    case listen, adapter
    case useAdapters = "use-adapters"
    case connectionSlots = "connection-slots"
    case apiKey = "api-key"
    case apiKeyFile = "api-key-file"
    case corsOrigin = "cors-origin"
    case tlsCert = "tls-cert"
    case tlsKey = "tls-key"
    case logLevel = "log-level"
    case logFormat = "log-format"
    case bus, simulate
    case stateDir = "state-dir"
    case noState = "no-state"
    case stateDurability = "state-durability"
    case heartbeatInterval = "heartbeat-interval"
    case replayBuffer = "replay-buffer"
    case streamBufferMax = "stream-buffer-max"
    case maxConnections = "max-connections"
    case maxConnectionsPerClient = "max-connections-per-client"
    case maxKeptDevices = "max-kept-devices"
    case maxKeptDevicesPerClient = "max-kept-devices-per-client"
    case maxSubscriptions = "max-subscriptions"
    case maxSubscriptionsPerClient = "max-subscriptions-per-client"
    case maxApplications = "max-applications"
    case maxApplicationsPerClient = "max-applications-per-client"
    case maxAdvertisements = "max-advertisements"
    case maxAdvertisementsPerClient = "max-advertisements-per-client"
    case requestHeaderTimeout = "request-header-timeout"
    case agentCapability = "agent-capability"
    case defaultAgent = "default-agent"
    case pairingRequestTimeout = "pairing-request-timeout"
    case mqtt
    case mqttUsername = "mqtt-username"
    case mqttPassword = "mqtt-password"
    case mqttPasswordFile = "mqtt-password-file"
    case mqttCA = "mqtt-ca"
    case mqttCert = "mqtt-cert"
    case mqttKey = "mqtt-key"
    case gatewayID = "gateway-id"
    case mqttQoS = "mqtt-qos"
    case mqttKeepalive = "mqtt-keepalive"
    case mqttCommands = "mqtt-commands"
    case mqttHomeAssistant = "mqtt-homeassistant"
    case mqttPresence = "mqtt-presence"
    case mqttRoamMargin = "mqtt-roam-margin"
    case mqttRoamLostAfter = "mqtt-roam-lost-after"
    case mqttRoamPenalty = "mqtt-roam-penalty"
    case mqttStreamLease = "mqtt-stream-lease"
    case notifyPath = "notify-path"
    case presenceTimeout = "presence-timeout"
    case printConfig = "print-config"

    /// How an option takes its value, and so how its environment variable
    /// becomes arguments.
    enum Kind {
        /// `--flag VALUE`.
        case value
        /// `--flag VALUE`, repeated; the variable holds the values separated by `separator`.
        case list(separator: Character)
        /// `--flag` alone; the variable is `1`, `true` or `yes` to set it.
        case flag
        /// `--flag` or `--no-flag`; the variable is `1`, `true`, `yes` or `0`, `false`, `no`.
        case invertibleFlag
    }

    var kind: Kind {
        switch self {
        case .corsOrigin: .list(separator: ",")
        case .noState, .mqttCommands, .mqttHomeAssistant, .printConfig: .flag
        case .defaultAgent: .invertibleFlag
        default: .value
        }
    }

    /// `BLEGATEWAY_` and the flag in capitals, `-` as `_`; nil for an
    /// option the environment does not set.
    var environmentVariable: String? {
        switch self {
        // A list of origins, plural (as it always was).
        case .corsOrigin: "BLEGATEWAY_CORS_ORIGINS"
        // An action, not a setting.
        case .printConfig: nil
        default: "BLEGATEWAY_" + String(rawValue.uppercased().map { $0 == "-" ? "_" : $0 })
        }
    }

    /// The options that, given on the command line, make this one's
    /// variable moot (the command line wins: `--api-key-file` over
    /// `BLEGATEWAY_API_KEY`, `--no-state` over `BLEGATEWAY_STATE_DIR`).
    var yieldsTo: [ServeOption] {
        switch self {
        case .apiKey: [.apiKeyFile]
        case .stateDir: [.noState]
        case .mqttPassword: [.mqttPasswordFile]
        default: []
        }
    }

    /// `serve`'s arguments with the environment's values before them, for
    /// every option the command line does not give.
    static func environmentArguments(_ arguments: [String], environment: [String: String]) -> [String] {
        var fromEnvironment: [String] = []
        for option in allCases where !option.isGiven(in: arguments) && !option.yieldsTo.contains(where: { $0.isGiven(in: arguments) }) {
            guard let variable = option.environmentVariable, let value = environment[variable] else { continue }
            fromEnvironment += option.arguments(for: value)
        }
        return fromEnvironment + arguments
    }

    private func isGiven(in arguments: [String]) -> Bool {
        arguments.contains { argument in
            argument == "--\(rawValue)" || argument.hasPrefix("--\(rawValue)=") || argument == "--no-\(rawValue)"
        }
    }

    private func arguments(for value: String) -> [String] {
        let yes = ["1", "true", "yes"].contains(value.lowercased())
        switch kind {
        case .value:
            return ["--\(rawValue)=\(value)"]
        case .list(let separator):
            return value.split(separator: separator).map { $0.trimming(where: { $0.isWhitespace && !$0.isNewline }) }
                .filter { !$0.isEmpty }.map { "--\(rawValue)=\($0)" }
        case .flag:
            return yes ? ["--\(rawValue)"] : []
        case .invertibleFlag:
            if yes { return ["--\(rawValue)"] }
            return ["0", "false", "no"].contains(value.lowercased()) ? ["--no-\(rawValue)"] : []
        }
    }
}
