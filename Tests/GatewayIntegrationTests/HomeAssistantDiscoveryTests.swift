import Foundation
import Glibc
import Testing
import TestSupport

/// `blegateway serve --simulate --mqtt … --mqtt-homeassistant` on the default
/// scenario, with a real mosquitto: every discovery payload passes Home
/// Assistant's rules (Tests/homeassistant/check_discovery.py), every sensor
/// the gateway decodes or reads appears, and a clean stop leaves nothing
/// that looks live.
@Suite struct HomeAssistantDiscoveryTests {
    static let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("homeassistant/check_discovery.py").path

    struct Retained {
        let status: Int32
        let problems: String
        /// Discovery topic -> [device_class, device_name, manufacturer, model, state].
        let entities: [String: [String: Any]]
        let topics: [String: String]
    }

    /// The broker's retained messages under `homeassistant/` and
    /// `blegateway/`, checked.
    static func retained(_ broker: Broker) async throws -> Retained {
        let result = try await run([
            "sh", "-c",
            """
            mosquitto_sub -p \(broker.port) -t 'homeassistant/#' -t 'blegateway/#' -F %j --retained-only -W 3 \
            | python3 "\(checker)"
            """,
        ])
        let object = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any] ?? [:]
        var entities: [String: [String: Any]] = [:]
        for entity in object["entities"] as? [[String: Any]] ?? [] {
            if let topic = entity["topic"] as? String { entities[topic] = entity }
        }
        return Retained(
            status: result.status, problems: result.error, entities: entities,
            topics: object["retained"] as? [String: String] ?? [:])
    }

    static let expected = [
        // The strap: heart rate (notifications) and battery (a read), behind its connection.
        "homeassistant/sensor/blegateway_hall_c47c8d6a3e01/heart_rate/config",
        "homeassistant/sensor/blegateway_hall_c47c8d6a3e01/battery/config",
        "homeassistant/binary_sensor/blegateway_hall_c47c8d6a3e01/connected/config",
        // The thermometer: temperature from 2a1c indications.
        "homeassistant/sensor/blegateway_hall_a4c1382f1b07/temperature/config",
        // The BTHome sensor: temperature, humidity and battery from its advertisements.
        "homeassistant/sensor/blegateway_hall_a4c1388e2f55/temperature/config",
        "homeassistant/sensor/blegateway_hall_a4c1388e2f55/humidity/config",
        "homeassistant/sensor/blegateway_hall_a4c1388e2f55/battery/config",
        "homeassistant/binary_sensor/blegateway_hall_a4c1388e2f55/presence/config",
        // The iBeacon and the Eddystone beacons: presence and signal.
        "homeassistant/binary_sensor/blegateway_hall_f1e2d3c4b5a6/presence/config",
        "homeassistant/sensor/blegateway_hall_f1e2d3c4b5a6/rssi/config",
        "homeassistant/binary_sensor/blegateway_hall_e71d5a3c9011/presence/config",
        "homeassistant/binary_sensor/blegateway_hall_e71d5a3c9012/presence/config",
        "homeassistant/binary_sensor/blegateway_hall_e71d5a3c9013/presence/config",
        // The gateway, for via_device.
        "homeassistant/binary_sensor/blegateway_hall/status/config",
    ]

    @Test(.timeLimit(.minutes(5))) func everyDecodedSensorIsAnnouncedAsHomeAssistantDocumentsIt() async throws {
        let broker = try await Broker.start()
        let (process, base) = try await ObservabilityTests.startSimulated([
            "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--gateway-id", "hall", "--mqtt-homeassistant", "--no-state",
        ])
        defer { process.kill() }
        let strap = "C4:7C:8D:6A:3E:01"
        let thermometer = "A4:C1:38:2F:1B:07"
        let scan = try ChildProcess(["curl", "-sN", base + "/v1/scan"])
        defer { scan.kill() }
        for device in [strap, thermometer] {
            let connected = try await run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", base + "/v1/devices/\(device)/connect"])
            #expect(connected.output == "200", "connect \(device): \(connected.output)")
        }
        #expect(try await run(["curl", "-sf", "-o", "/dev/null", base + "/v1/devices/\(strap)/characteristics/2a19/value"]).status == 0)
        let heartRate = try ChildProcess(["curl", "-sN", base + "/v1/devices/\(strap)/characteristics/2a37/notifications"])
        defer { heartRate.kill() }
        let temperature = try ChildProcess(["curl", "-sN", base + "/v1/devices/\(thermometer)/characteristics/2a1c/notifications"])
        defer { temperature.kill() }

        var seen = try await Self.retained(broker)
        let deadline = ContinuousClock.now + .seconds(90)
        while Self.expected.contains(where: { seen.entities[$0]?["state"] is String == false }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            seen = try await Self.retained(broker)
        }
        #expect(seen.status == 0, "Home Assistant's rules refuse:\n\(seen.problems)")
        for topic in Self.expected {
            #expect(seen.entities[topic]?["state"] is String, "\(topic) missing or without a state")
        }
        let strapEntity = seen.entities["homeassistant/sensor/blegateway_hall_c47c8d6a3e01/heart_rate/config"] ?? [:]
        #expect(strapEntity["device_name"] as? String == "Polar H10 6A3E01")
        #expect(strapEntity["manufacturer"] as? String == "Polar Electro OY")
        #expect(strapEntity["model"] as? String == "Heart Rate device")
        #expect(seen.entities["homeassistant/sensor/blegateway_hall_a4c1388e2f55/temperature/config"]?["model"] as? String == "BTHome v2 sensor")
        #expect(seen.entities["homeassistant/sensor/blegateway_hall_a4c1388e2f55/humidity/config"]?["state"] as? String == "50.55")
        let celsius = Double(seen.entities["homeassistant/sensor/blegateway_hall_a4c1382f1b07/temperature/config"]?["state"] as? String ?? "")
        #expect(celsius.map { (21.1...21.9).contains($0) } == true, "thermometer \(celsius ?? .nan)")
        // What docs/mqtt.md lists as retained is there from the start.
        #expect(seen.topics["blegateway/hall/bluez"]?.contains("\"state\":\"available\"") == true)
        #expect(seen.topics["blegateway/hall/adapters/hci0/state"]?.contains("\"state\":\"powered-on\"") == true)
        #expect(seen.topics["blegateway/hall/devices/\(strap)/connection"] != nil)

        // A clean stop: the gateway offline, every link entity OFF (so the
        // readings show unavailable), the connection topics cleared.
        process.signal(SIGTERM)
        #expect(await process.wait(timeout: .seconds(30)) == 0)
        let after = try await Self.retained(broker)
        #expect(after.topics["blegateway/hall/status"] == "offline")
        #expect(after.topics["blegateway/hall/devices/\(strap)/sensors/connected"] == "OFF")
        #expect(after.topics["blegateway/hall/devices/A4:C1:38:8E:2F:55/sensors/presence"] == "OFF")
        #expect(after.topics["blegateway/hall/devices/\(strap)/connection"] == nil)
        await broker.stop()
    }
}
