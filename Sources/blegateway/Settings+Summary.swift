#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Settings {
    /// The settings as `serve --print-config` prints them, one `name: value`
    /// a line, after the command line, the environment and the defaults
    /// were combined; the API key is shown as set or not, never itself.
    var summary: String {
        let lines: [(String, String)] = [
            ("listen", listen.description),
            ("adapter", adapter ?? "(none: connections pick an adapter, the rest BlueZ's first)"),
            ("connection-slots", slotLimits.description),
            ("api-key", apiKey == nil ? "(none)" : "(set)"),
            ("cors-origins", corsOrigins.isEmpty ? "(none)" : corsOrigins.sorted().joined(separator: ",")),
            ("tls", tlsCertificate.map { "\($0) with key \(tlsKey ?? "?")" } ?? "(off)"),
            ("log-level", logLevel.rawValue),
            ("log-format", logFormat.rawValue),
            ("bus", simulate == nil ? bus.description : "(the simulator's private bus)"),
            ("simulate", simulate ?? "(off)"),
            ("state-dir", keepsState ? stateDirectory ?? "(a temporary directory)" : "(none: --no-state)"),
            ("replay-buffer", String(replayBuffer)),
            ("stream-buffer-max", String(streamBufferMax / 1024)),
            ("max-connections", String(maxConnections)),
            ("max-connections-per-client", String(maxConnectionsPerClient)),
            ("request-header-timeout", "\(requestHeaderTimeout)"),
            ("heartbeat-interval", "\(heartbeatInterval)"),
            ("agent-capability", agentCapability.rawValue),
            ("default-agent", String(defaultAgent)),
            ("notify-path", notifyPath.rawValue),
            ("pairing-request-timeout", "\(pairingRequestTimeout)"),
            ("presence-timeout", presenceTimeout.map { "\($0)" } ?? "(off)"),
            ("mqtt", mqtt.map { "\($0.client.broker)" } ?? "(off)"),
        ]
        return lines.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
    }
}
