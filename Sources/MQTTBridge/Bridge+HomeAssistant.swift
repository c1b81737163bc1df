import GatewayAPI
import MQTT

// Home Assistant MQTT discovery (docs/mqtt.md, "Home Assistant"): a retained
// config per device and sensor under `<discovery prefix>/sensor/…`, the first
// time the sensor's value is seen, and the plain number on
// `<prefix>/<id>/devices/<address>/sensors/<kind>`.
extension Bridge {
    /// Publishes a reading of a standard sensor for Home Assistant (its
    /// discovery config first, once per device and sensor). The bridge calls
    /// it for heart rate (2a37) and battery level (2a19) values; decoded
    /// advertisements (temperature, humidity) call it too. Does nothing
    /// without `BridgeConfiguration.homeAssistant`.
    public func publishSensorReading(device: String, kind: SensorKind, value: Double, name: String? = nil) {
        guard let discoveryPrefix = configuration.homeAssistant else { return }
        let stateTopic = "\(configuration.base)/devices/\(device)/sensors/\(kind.rawValue)"
        let isNew = announcedSensors.withLock { $0.insert("\(device)|\(kind.rawValue)").inserted }
        if isNew {
            let node = "blegateway_\(Self.identifier(configuration.gatewayID))_\(Self.identifier(device))"
            let deviceName = name ?? "BLE \(device)"
            var members = [
                "\"name\":\(Self.quoted(kind.name))",
                "\"unique_id\":\(Self.quoted("\(node)_\(kind.rawValue)"))",
                "\"object_id\":\(Self.quoted("\(node)_\(kind.rawValue)"))",
                "\"state_topic\":\(Self.quoted(stateTopic))",
                "\"unit_of_measurement\":\(Self.quoted(kind.unit))",
                "\"state_class\":\"measurement\"",
                "\"availability_topic\":\(Self.quoted(topics.status))",
                "\"payload_available\":\"online\"",
                "\"payload_not_available\":\"offline\"",
                """
                "device":{"identifiers":[\(Self.quoted("blegateway_\(Self.identifier(device))"))],\
                "connections":[["bluetooth",\(Self.quoted(device))]],"name":\(Self.quoted(deviceName)),\
                "via_device":\(Self.quoted("blegateway_\(Self.identifier(configuration.gatewayID))"))}
                """,
            ]
            if let deviceClass = kind.deviceClass { members.append("\"device_class\":\(Self.quoted(deviceClass))") }
            if let icon = kind.icon { members.append("\"icon\":\(Self.quoted(icon))") }
            _ = try? client.publish(
                "\(discoveryPrefix)/sensor/\(node)/\(kind.rawValue)/config",
                payload: Array("{\(members.joined(separator: ","))}".utf8), qos: .atLeastOnce, retain: true,
                properties: Self.json)
        }
        let text = value == value.rounded() ? String(Int(value)) : String(value)
        _ = try? client.publish(stateTopic, payload: Array(text.utf8), qos: configuration.valueQoS, retain: true)
    }

    /// Heart rate and battery level values become sensor readings.
    func offerSensorValue(_ event: BridgedEvent) {
        guard configuration.homeAssistant != nil, event.type == "characteristic-value", let device = event.device,
            let uuid = event.characteristic, let kind = SensorKind.forCharacteristic(uuid),
            let bytes = event.value, let reading = kind.decode(bytes)
        else { return }
        publishSensorReading(device: device, kind: kind, value: reading)
    }

    /// Home Assistant ids allow letters, digits, `_` and `-`.
    static func identifier(_ text: String) -> String {
        String(text.unicodeScalars.compactMap { scalar -> Character? in
            if scalar == ":" { return nil }
            return scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) || scalar == "-")
                ? Character(scalar) : "_"
        })
    }
}
