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
        var lines: [(String, String)] = [
            ("listen", listen.description),
            ("adapter", api.defaultAdapter ?? "(none: connections pick an adapter, the rest BlueZ's first)"),
            ("use-adapters", central.adapterScope.adapters.map { $0.sorted().joined(separator: ",") } ?? "(all)"),
            ("connection-slots", central.slotLimits.description),
            ("api-key", api.apiKey == nil ? "(none)" : "(set)"),
            ("cors-origins", api.corsOrigins.isEmpty ? "(none)" : api.corsOrigins.sorted().joined(separator: ",")),
            ("tls", tlsCertificate.map { "\($0) with key \(tlsKey ?? "?")" } ?? "(off)"),
            ("log-level", logLevel.rawValue),
            ("log-format", logFormat.rawValue),
            ("bus", simulate == nil ? bus.description : "(the simulator's private bus)"),
            ("simulate", simulate ?? "(off)"),
            ("state-dir", keepsState ? stateDirectory ?? "(a temporary directory)" : "(none: --no-state)"),
            ("state-durability", keepsState ? stateDurability.rawValue : "(none: --no-state)"),
            ("replay-buffer", String(api.replayBufferSize)),
            ("stream-buffer-max", String(api.maximumStreamBufferBytes / 1024)),
            ("max-connections", String(server.connectionLimit)),
            ("max-connections-per-client", String(server.maxConnectionsPerClient)),
            ("request-header-timeout", "\(server.requestHeaderTimeout)"),
            ("heartbeat-interval", "\(api.heartbeatInterval)"),
            ("agent-capability", agent.capability.rawValue),
            ("default-agent", String(agent.isDefault)),
            ("notify-path", central.notifyPath.rawValue),
            ("pairing-request-timeout", "\(api.pairingRequestTimeout)"),
            ("presence-timeout", api.presenceTimeout.map { "\($0)" } ?? "(off)"),
            ("mqtt", mqtt.map { "\($0.client.broker)" } ?? "(off)"),
        ]
        if let bridge = mqtt?.bridge {
            lines += [
                ("gateway-id", bridge.gatewayID),
                ("mqtt-commands", String(bridge.commands)),
                ("mqtt-presence", bridge.presenceSource.rawValue),
                ("mqtt-roam-margin", "\(Int(bridge.roamMargin)) dB"),
                ("mqtt-roam-lost-after", "\(bridge.roamLostAfter)"),
                ("mqtt-roam-penalty", "\(bridge.roamPenalty)"),
                ("mqtt-stream-lease", "\(bridge.streamLeaseTime)"),
            ]
        }
        return lines.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
    }
}
