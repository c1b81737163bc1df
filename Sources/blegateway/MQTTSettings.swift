import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import MQTT
import MQTTBridge

/// The MQTT options checked (the environment's values among them):
/// the client's and the bridge's configurations.
struct MQTTSettings {
    var client: MQTT.Configuration
    var bridge: BridgeConfiguration

    /// nil when no broker is given (`--mqtt`).
    init?(_ options: MQTTOptions) throws {
        guard let urlText = options.url, !urlText.isEmpty else { return nil }
        let broker: BrokerURL
        do {
            broker = try BrokerURL(parsing: urlText)
        } catch {
            throw ValidationError("--mqtt must be mqtt://[user[:password]@]host[:port] or mqtts://…, not '\(urlText)' (\(error))")
        }
        let gatewayID = options.gatewayID ?? Self.hostName()
        guard Self.isValidGatewayID(gatewayID) else {
            throw ValidationError(
                """
                --gateway-id must be 1 to 64 letters, digits, '-', '_' or '.' (one MQTT topic level) and not 'any', \
                not '\(gatewayID)'
                """)
        }
        var password = options.password
        if let path = options.passwordFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read the MQTT password file \(path)")
            }
            password = text.trimming(where: \.isNewline)
        }
        let username = options.username
        var credentials: MQTT.Configuration.Credentials?
        if let username {
            credentials = .init(username: username, password: password)
        } else if let password {
            guard let urlUser = broker.username else {
                throw ValidationError("an MQTT password needs a user name (--mqtt-username or in the URL)")
            }
            credentials = .init(username: urlUser, password: password)
        }
        for path in [options.caFile, options.certificateFile, options.keyFile].compactMap({ $0 }) {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ValidationError("cannot read \(path)")
            }
        }
        if !broker.usesTLS, options.caFile != nil || options.certificateFile != nil {
            throw ValidationError("--mqtt-ca, --mqtt-cert and --mqtt-key need an mqtts:// broker")
        }
        guard let qos = QoS(rawValue: options.qos), qos != .exactlyOnce else {
            throw ValidationError("--mqtt-qos must be 0 or 1, not '\(options.qos)'")
        }
        client = MQTT.Configuration(
            broker: broker, clientID: "blegateway-\(gatewayID)", credentials: credentials,
            tls: .init(caFile: options.caFile, certificateFile: options.certificateFile, keyFile: options.keyFile),
            keepAlive: options.keepAlive)
        bridge = BridgeConfiguration(gatewayID: gatewayID, valueQoS: qos)
        bridge.commands = options.commands
        if options.homeAssistant { bridge.homeAssistant = "homeassistant" }
        bridge.presenceSource = PresenceSource(rawValue: options.presence) ?? .scans
        bridge.roamMargin = Double(options.roamMargin)
        bridge.roamLostAfter = .milliseconds(Int(options.roamLostAfter * 1000))
        bridge.roamPenalty = .milliseconds(Int(options.roamPenalty * 1000))
        bridge.streamLeaseTime = .milliseconds(Int(options.streamLease * 1000))
    }

    /// One MQTT topic level of safe characters; `any` addresses the fleet.
    static func isValidGatewayID(_ id: String) -> Bool {
        (1...64).contains(id.count) && id != "any"
            && id.unicodeScalars.allSatisfy { $0.isASCII && (Character($0).isLetter || Character($0).isNumber || "-_.".unicodeScalars.contains($0)) }
    }

    /// The host name up to its first dot (a fully qualified name's dots are
    /// allowed, but the short name is what users call the machine).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "blegateway" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.prefix { $0 != "." })
    }
}
