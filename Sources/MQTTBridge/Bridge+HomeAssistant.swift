import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import MQTT

// Home Assistant MQTT discovery (docs/mqtt.md, "Home Assistant"): the gateway
// as a device of its own; for each device, a retained discovery config per
// entity under `<discovery prefix>/<component>/…` the first time its value is
// seen, and the plain value, retained, under
// `<prefix>/<id>/devices/<address>/sensors/<key>`.
//
// Every device gets a link entity whose state is the availability of its
// other entities: `connected` (binary_sensor, connectivity) for readings
// from characteristics, `presence` (binary_sensor, presence) for readings
// and beacons heard in advertisements. So a strap's heart rate shows as
// unavailable once it disconnects, and a sensor's temperature once bluetoothd
// stops hearing it, rather than its last value forever.
extension Bridge {
    /// Where a reading comes from, which decides the link entity that says
    /// whether it is current.
    enum ReadingSource {
        case connection, advertisement

        var linkKey: String { self == .connection ? "connected" : "presence" }
        var linkName: String { self == .connection ? "Connected" : "Presence" }
        var linkDeviceClass: String { self == .connection ? "connectivity" : "presence" }
    }

    /// The decoded advertisement formats that make a device a beacon, shown
    /// as a presence with its signal strength.
    static let beaconFormats: Set<String> = ["ibeacon", "eddystone-uid", "eddystone-url", "eddystone-tlm"]

    /// Feeds one event to Home Assistant: characteristic values and decoded
    /// advertisements become readings, connections and losses move the link
    /// entities. Does nothing without `BridgeConfiguration.homeAssistant`.
    func offerToHomeAssistant(_ event: BridgedEvent) {
        guard configuration.homeAssistant != nil, let device = event.device else { return }
        switch event.type {
        case "characteristic-value":
            guard let uuid = event.characteristic, let kind = SensorKind.forCharacteristic(uuid),
                let bytes = event.value, let reading = kind.decode(bytes)
            else { return }
            // The device's snapshot is looked up only to announce it, not per value.
            setLink(device, .connection, on: true, snapshot: self.gateway.deviceSnapshot(device))
            publishReading(device, kind, reading, source: .connection, snapshot: self.gateway.deviceSnapshot(device))
        case "device-discovered", "device-updated":
            guard let snapshot = event.snapshot else { return }
            let decoded = snapshot.advertisement.decoded
            let readings = SensorKind.readings(in: decoded)
            let isBeacon = decoded.contains { Self.beaconFormats.contains($0.format) }
            guard isBeacon || !readings.isEmpty else { return }
            setLink(device, .advertisement, on: true, snapshot: snapshot)
            for (kind, value) in readings { publishReading(device, kind, value, source: .advertisement, snapshot: snapshot) }
            if let rssi = event.rssi {
                publishReading(device, .signalStrength, Double(rssi), source: .advertisement, snapshot: snapshot)
            }
        case "device-lost":
            setLink(device, .advertisement, on: false, snapshot: event.snapshot)
        case "device-connected", "services-resolved":
            setLink(device, .connection, on: true, snapshot: event.snapshot)
        case "device-disconnected":
            setLink(device, .connection, on: false, snapshot: event.snapshot)
        default:
            return
        }
    }

    /// Announces the gateway itself (the device every other one names as
    /// `via_device`), with its status as a connectivity entity. Sent on
    /// every connection, like `online`.
    func announceGatewayToHomeAssistant() {
        guard let discoveryPrefix = configuration.homeAssistant else { return }
        let node = "blegateway_\(Self.slug(configuration.gatewayID))"
        let config: [String: JSON] = [
            "name": .string("Status"),
            "unique_id": .string("\(node)_status"),
            "default_entity_id": .string("binary_sensor.\(node)_status"),
            "state_topic": .string(topics.status),
            "payload_on": .string("online"),
            "payload_off": .string("offline"),
            "device_class": .string("connectivity"),
            "entity_category": .string("diagnostic"),
            "device": Self.sortedObject([
                "identifiers": .array([.string(gatewayIdentifier)]),
                "name": .string("blegateway \(configuration.gatewayID)"),
                "manufacturer": .string("blegateway"),
                "model": .string("BLE-to-HTTP gateway"),
                "sw_version": .string(gateway.configuration.version),
            ]),
            "origin": origin,
        ]
        _ = try? client.publish(
            "\(discoveryPrefix)/binary_sensor/\(node)/status/config", payload: Self.jsonBytes(config), qos: .atLeastOnce,
            retain: true, properties: Self.json)
    }

    /// On a clean stop: every link entity that says `ON` says `OFF`, so the
    /// readings behind it show as unavailable, not as current.
    func retireHomeAssistantLinks() {
        for topic in homeAssistant.withLock({ $0.retireLinks() }) {
            _ = try? client.publish(topic, payload: Array("OFF".utf8), qos: .atLeastOnce, retain: true)
        }
    }

    // MARK: Entities

    private func publishReading(
        _ device: String, _ kind: SensorKind, _ value: Double, source: ReadingSource,
        snapshot: @autoclosure () -> Device?
    ) {
        let stateTopic = sensorTopic(device, kind.rawValue)
        var config: [String: JSON] = [
            "name": .string(kind.name),
            "state_topic": .string(stateTopic),
            "unit_of_measurement": .string(kind.unit),
            "state_class": .string("measurement"),
            "availability_mode": .string("all"),
            "availability": .array([
                Self.sortedObject([
                    "topic": .string(topics.status), "payload_available": .string("online"),
                    "payload_not_available": .string("offline"),
                ]),
                Self.sortedObject([
                    "topic": .string(sensorTopic(device, source.linkKey)), "payload_available": .string("ON"),
                    "payload_not_available": .string("OFF"),
                ]),
            ]),
        ]
        if let deviceClass = kind.deviceClass { config["device_class"] = .string(deviceClass) }
        if let icon = kind.icon { config["icon"] = .string(icon) }
        if kind.isDiagnostic { config["entity_category"] = .string("diagnostic") }
        announce("sensor", device, kind.rawValue, config, snapshot: snapshot)
        let text = value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        guard homeAssistant.withLock({ $0.change(stateTopic, to: text) }) else { return }
        _ = try? client.publish(stateTopic, payload: Array(text.utf8), qos: configuration.valueQoS, retain: true)
    }

    /// Moves a device's link entity (`connected` or `presence`); a device
    /// whose link was never announced is announced only when it goes `ON`.
    private func setLink(_ device: String, _ source: ReadingSource, on: Bool, snapshot: @autoclosure () -> Device?) {
        let stateTopic = sensorTopic(device, source.linkKey)
        let known = homeAssistant.withLock { $0.isLink(stateTopic) }
        guard on || known else { return }
        if !known {
            homeAssistant.withLock { $0.addLink(stateTopic) }
            let config: [String: JSON] = [
                "name": .string(source.linkName),
                "state_topic": .string(stateTopic),
                "device_class": .string(source.linkDeviceClass),
                "availability_topic": .string(topics.status),
                "payload_available": .string("online"),
                "payload_not_available": .string("offline"),
            ]
            announce("binary_sensor", device, source.linkKey, config, snapshot: snapshot)
        }
        let payload = on ? "ON" : "OFF"
        guard homeAssistant.withLock({ $0.change(stateTopic, to: payload) }) else { return }
        _ = try? client.publish(stateTopic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: true)
    }

    /// Publishes an entity's discovery config the first time it is seen,
    /// with its ids and device block.
    private func announce(
        _ component: String, _ device: String, _ key: String, _ entity: [String: JSON], snapshot: () -> Device?
    ) {
        guard let discoveryPrefix = configuration.homeAssistant,
            homeAssistant.withLock({ $0.announce("\(device)|\(key)") })
        else { return }
        let node = "blegateway_\(Self.slug(configuration.gatewayID))_\(Self.slug(device))"
        var config = entity
        config["unique_id"] = .string("\(node)_\(key)")
        config["default_entity_id"] = .string("\(component).\(node)_\(Self.slug(key))")
        config["device"] = deviceBlock(device, snapshot())
        config["origin"] = origin
        _ = try? client.publish(
            "\(discoveryPrefix)/\(component)/\(node)/\(key)/config", payload: Self.jsonBytes(config), qos: .atLeastOnce,
            retain: true, properties: Self.json)
    }

    /// The device block: its address, its advertised name, the company of
    /// its manufacturer data and a model from what it advertises, with the
    /// gateway as `via_device`. Names come from the radio: control
    /// characters are dropped and the length bounded.
    private func deviceBlock(_ device: String, _ snapshot: Device?) -> JSON {
        var block: [String: JSON] = [
            "identifiers": .array([.string("blegateway_\(Self.slug(device))")]),
            "connections": .array([.array([.string("bluetooth"), .string(device)])]),
            "name": .string(Self.radioText(snapshot?.name ?? snapshot?.alias) ?? "BLE \(device)"),
            "via_device": .string(gatewayIdentifier),
        ]
        let advertisement = snapshot?.advertisement
        if let company = advertisement?.manufacturerData.keys.sorted().lazy.compactMap(\.name).first {
            block["manufacturer"] = .string(company)
        }
        if let model = Self.model(advertisement) { block["model"] = .string(model) }
        return Self.sortedObject(block)
    }

    /// Services every device may have, which say nothing of what it is.
    static let commonServices: Set<BluetoothUUID> = Set([0x1800, 0x1801, 0x180A, 0x180F].map { BluetoothUUID(uuid16: $0) })

    /// A model from the advertisement: the decoded frame's format, else the
    /// first service with an assigned name that is not one of the common
    /// ones (Generic Access, Device Information, Battery, ...).
    static func model(_ advertisement: AdvertisementData?) -> String? {
        guard let advertisement else { return nil }
        let labels = [
            "ibeacon": "iBeacon", "eddystone-uid": "Eddystone-UID beacon", "eddystone-url": "Eddystone-URL beacon",
            "eddystone-tlm": "Eddystone-TLM beacon", "bthome": "BTHome v2 sensor",
        ]
        if let label = advertisement.decoded.lazy.compactMap({ labels[$0.format] }).first { return label }
        return advertisement.serviceUUIDs.lazy.filter { !commonServices.contains($0) }.compactMap(\.name).first
            .map { "\($0) device" }
    }

    private var gatewayIdentifier: String { "blegateway_gateway_\(Self.slug(configuration.gatewayID))" }

    private var origin: JSON {
        Self.sortedObject(["name": .string("blegateway"), "sw_version": .string(gateway.configuration.version)])
    }

    private func sensorTopic(_ device: String, _ key: String) -> String {
        "\(configuration.base)/devices/\(device)/sensors/\(key)"
    }

    /// Text from a device, fit to show: no control characters, at most 64
    /// characters; nil when nothing is left.
    static func radioText(_ text: String?) -> String? {
        guard let text else { return nil }
        let shown = String(text.unicodeScalars.filter { !$0.properties.isNoncharacterCodePoint && $0.value >= 0x20 && $0.value != 0x7F }.prefix(64))
            .trimming(where: { $0.isWhitespace && !$0.isNewline })
        return shown.isEmpty ? nil : shown
    }

    /// An id Home Assistant accepts in entity ids and discovery topics:
    /// lower-case letters and digits, single underscores between them.
    static func slug(_ text: String) -> String {
        var slug = ""
        for scalar in text.lowercased().unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) {
                slug.unicodeScalars.append(scalar)
            } else if scalar != ":", !slug.isEmpty, !slug.hasSuffix("_") {
                slug += "_"
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        return slug.isEmpty ? "x" : slug
    }

    /// A discovery config's bytes: its members sorted by key, so that a
    /// config that did not change is retained as the same bytes.
    static func jsonBytes(_ object: [String: JSON]) -> [UInt8] { sortedObject(object).bytes }

    static func sortedObject(_ members: [String: JSON]) -> JSON {
        .object(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}
