import ArgumentParser
import MQTTBridge

/// `serve`'s MQTT options (docs/mqtt.md).
struct MQTTOptions: ParsableArguments {
    @Option(
        .mqtt,
        help: ArgumentHelp(
            "Publish events to this MQTT broker (and, with --mqtt-commands, take commands from it): mqtt://[user[:password]@]host[:port] or mqtts://….",
            discussion: "Topics are under blegateway/<gateway-id>/ (docs/mqtt.md).",
            valueName: "url"))
    var url: String?

    @Option(
        .mqttUsername,
        help: ArgumentHelp("The broker user name (instead of one in the URL).", valueName: "name"))
    var username: String?

    @Option(
        .mqttPassword,
        help: ArgumentHelp("The broker password (instead of one in the URL).", valueName: "password"))
    var password: String?

    @Option(
        .mqttPasswordFile,
        help: ArgumentHelp("Read the broker password from a file (for container secrets).", valueName: "path"))
    var passwordFile: String?

    @Option(
        .mqttCA,
        help: ArgumentHelp("For mqtts://: the PEM CA certificate that signed the broker's (default: the system's).", valueName: "path"))
    var caFile: String?

    @Option(
        .mqttCert,
        help: ArgumentHelp("For mqtts://: a PEM client certificate, for brokers that require one (needs --mqtt-key).", valueName: "path"))
    var certificateFile: String?

    @Option(.mqttKey, help: ArgumentHelp("The PEM private key of --mqtt-cert.", valueName: "path"))
    var keyFile: String?

    @Option(
        .gatewayID,
        help: ArgumentHelp(
            "This gateway's name in MQTT topics and its client id (default: the host name).",
            discussion: "Letters, digits, '-', '_' and '.'; 'any' is reserved for commands to the whole fleet.",
            valueName: "id"))
    var gatewayID: String?

    @Option(
        .mqttQoS,
        help: ArgumentHelp(
            "The QoS of characteristic values (notifications and reads): 0 or 1.",
            discussion: "0 drops values while the broker is away; 1 queues them (bounded) and delivers them after.",
            valueName: "qos"))
    var qos = 0

    @Option(
        .mqttKeepalive,
        help: ArgumentHelp(
            "Seconds between keep-alive pings (5 to 65535).",
            discussion: "The broker publishes the gateway's Last Will ('offline') 1.5 times this after it vanishes; the fleet moves its unfinished commands to another gateway then.",
            valueName: "seconds"))
    var keepAlive = 30

    @Flag(
        .mqttCommands,
        help: ArgumentHelp(
            "Take commands from the broker (connect, read, write, subscribe, ...).",
            discussion: "Off by default: whoever may publish on blegateway/<gateway-id>/cmd/ drives your devices. With --api-key, a command must carry the key in the MQTT 5 user property 'api-key'; answers go only to response topics under blegateway/replies/. docs/mqtt.md, Security, has a broker ACL to go with it."))
    var commands = false

    @Flag(
        .mqttHomeAssistant,
        help: ArgumentHelp(
            "Announce the gateway and its sensors (heart rate, battery, temperature, humidity, beacons' presence and signal) to Home Assistant (MQTT discovery under homeassistant/)."))
    var homeAssistant = false

    @Option(
        .mqttPresence,
        help: ArgumentHelp(
            "Where the fleet's presence comes from: scans (only while a client scans) or passive (a passive scan of the gateway's own: an advertisement monitor where bluetoothd runs with -E, else 10 s of discovery every 40 s).",
            valueName: "scans|passive"))
    var presence = "scans"

    @Option(
        .mqttRoamMargin,
        help: ArgumentHelp(
            "dB by which another gateway must hear a fleet-kept device better than its holder (moving averages) to take it over (0 to 60).",
            discussion: "habluetooth's 16 dB by default: a margin well above the noise of RSSI keeps a device from flapping between gateways (docs/fleet.md, Kept by the fleet).",
            valueName: "dB"))
    var roamMargin = 16

    @Option(
        .mqttRoamLostAfter,
        help: ArgumentHelp(
            "Seconds a fleet-kept device's link must stay down, unheard, before its holder gives it to another gateway that hears it (0.5 to 600).",
            discussion: "Shorter roams faster; longer rides out a link that drops and comes back, as a device at the edge of range does (docs/fleet.md, Roaming).",
            valueName: "seconds"))
    var roamLostAfter: Double = 3

    @Option(
        .mqttRoamPenalty,
        help: ArgumentHelp(
            "Seconds a gateway that lost a fleet-kept device or failed to connect it is passed over for it while another will do (0 to 3600).",
            valueName: "seconds"))
    var roamPenalty: Double = 60

    @Option(
        .mqttStreamLease,
        help: ArgumentHelp(
            "Seconds the holder keeps a fleet notification stream's subscription without a renewal from the gateway serving it (3 to 600; renewed every third).",
            discussion: "How long a device keeps notifying for a serving gateway that died (docs/fleet.md, Notifications through the fleet).",
            valueName: "seconds"))
    var streamLease: Double = 15

    func validate() throws {
        guard PresenceSource(rawValue: presence) != nil else {
            throw ValidationError("--mqtt-presence is scans or passive, not '\(presence)'")
        }
        guard (0...60).contains(roamMargin) else { throw ValidationError("--mqtt-roam-margin must be 0 to 60 dB") }
        guard (0.5...600).contains(roamLostAfter) else {
            throw ValidationError("--mqtt-roam-lost-after must be 0.5 to 600 seconds")
        }
        guard (0...3600).contains(roamPenalty) else { throw ValidationError("--mqtt-roam-penalty must be 0 to 3600 seconds") }
        guard (3...600).contains(streamLease) else { throw ValidationError("--mqtt-stream-lease must be 3 to 600 seconds") }
        guard (5...65535).contains(keepAlive) else { throw ValidationError("--mqtt-keepalive must be 5 to 65535 seconds") }
        if (certificateFile == nil) != (keyFile == nil) {
            throw ValidationError("--mqtt-cert and --mqtt-key go together")
        }
        if password != nil, passwordFile != nil {
            throw ValidationError("give --mqtt-password or --mqtt-password-file, not both")
        }
    }
}
