import Foundation
import Testing

/// Every route, used as a client would, against the real gateway process.
@Suite struct RouteTests {
    @Test func gatewayRoutes() async throws {
        let gateway = try await GatewayUnderTest.start()
        let health = try await gateway.get("/health")
        #expect(health.status == 200)
        #expect(health.object["status"] as? String == "ok")
        #expect(health.object["bluez"] as? String == "available")

        let info = try await gateway.get("/v1")
        #expect(info.object["name"] as? String == "blegateway")
        #expect((info.object["bluez"] as? [String: Any])?["available"] as? Bool == true)
        #expect((info.object["adapters"] as? [[String: Any]])?.first?["name"] as? String == "hci0")

        let spec = try await gateway.get("/openapi.yaml")
        #expect(spec.status == 200)
        #expect(spec.contentType == "application/yaml")
        #expect(spec.text == (try String(contentsOfFile: ContractTests.specPath, encoding: .utf8)))

        let head = try await gateway.request("HEAD", "/health")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(await gateway.stop() == 0)
    }

    @Test func adapters() async throws {
        let gateway = try await GatewayUnderTest.start()
        let list = try await gateway.get("/v1/adapters")
        #expect(list.array.map { $0["name"] as? String } == ["hci0"])
        #expect(list.array.first?["address"] as? String == "00:1A:7D:DA:71:13")
        #expect(list.array.first?["state"] as? String == "powered-on")

        let off = try await gateway.request("PATCH", "/v1/adapters/hci0", json: #"{"powered":false}"#)
        #expect(off.status == 200, "\(off)")
        #expect(off.object["powered"] as? Bool == false)
        #expect(off.object["state"] as? String == "powered-off")
        let readBack = try await gateway.get("/v1/adapters/hci0")
        #expect(readBack.object["powered"] as? Bool == false)
        // Scanning needs power: a clear 503, with BlueZ's condition named.
        let scan = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":200}"#)
        #expect(scan.status == 503, "\(scan)")
        let on = try await gateway.request("PATCH", "/v1/adapters/hci0", json: #"{"powered":true}"#)
        #expect(on.object["state"] as? String == "powered-on", "\(on)")
        await gateway.stop()
    }

    @Test func scanForADurationAndListDevices() async throws {
        let gateway = try await GatewayUnderTest.start()
        let scan = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":2000}"#)
        #expect(scan.status == 200, "\(scan)")
        let found = (scan.object["devices"] as? [[String: Any]]) ?? []
        #expect(Set(found.compactMap { $0["address"] as? String }) == [TestScenario.strap, TestScenario.slow, TestScenario.beacon])
        #expect(scan.object["duration_ms"] as? Int == 2000)

        let filtered = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":1500,"services":["180d"]}"#)
        #expect((filtered.object["devices"] as? [[String: Any]])?.compactMap { $0["address"] as? String } == [TestScenario.strap])

        let strap = try await gateway.get("/v1/devices/\(TestScenario.strap.lowercased().replacingOccurrences(of: ":", with: "-"))")
        #expect(strap.status == 200, "\(strap)")
        #expect(strap.object["name"] as? String == "Strap 3E01")
        #expect(strap.object["address_type"] as? String == "random")
        let manufacturer = (strap.object["manufacturer_data"] as? [String: Any])?["0x006b"] as? [String: Any]
        #expect(manufacturer?["company_id"] as? Int == 0x6b)
        #expect(manufacturer?["value"] as? String == "3f00")
        let serviceData = (strap.object["service_data"] as? [String: Any])?["0000180d-0000-1000-8000-00805f9b34fb"] as? [String: Any]
        #expect(serviceData?["value"] as? String == "0102")
        #expect(serviceData?["name"] as? String == "Heart Rate")
        #expect(strap.object["service_uuids"] as? [String] == ["0000180d-0000-1000-8000-00805f9b34fb"])

        let base64 = try await gateway.get("/v1/devices/\(TestScenario.strap)?encoding=base64")
        #expect(((base64.object["manufacturer_data"] as? [String: Any])?["0x006b"] as? [String: Any])?["value"] as? String == "PwA=")

        let beacon = try await gateway.get("/v1/devices/\(TestScenario.beacon)")
        #expect(((beacon.object["manufacturer_data"] as? [String: Any])?["0x004c"] as? [String: Any])?["company"] as? String == "Apple, Inc.")

        let all = try await gateway.get("/v1/devices")
        #expect(all.array.count == 3)
        let heartRate = try await gateway.get("/v1/devices?service=180d")
        #expect(heartRate.array.compactMap { $0["address"] as? String } == [TestScenario.strap])
        let connected = try await gateway.get("/v1/devices?connected=true")
        #expect(connected.array.isEmpty)
        await gateway.stop()
    }

    @Test func connectBrowseReadWriteDisconnectForget() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"

        let connect = try await gateway.request("POST", device + "/connect")
        #expect(connect.status == 200, "\(connect)")
        #expect(connect.object["connected"] as? Bool == true)
        #expect(connect.object["services_resolved"] as? Bool == true)
        // Connecting again is a no-op, not an error.
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let connectedList = try await gateway.get("/v1/devices?connected=true")
        #expect(connectedList.array.compactMap { $0["address"] as? String } == [TestScenario.strap])

        let services = try await gateway.get(device + "/services")
        let uuids = services.array.compactMap { $0["uuid"] as? String }
        #expect(uuids.contains("0000180d-0000-1000-8000-00805f9b34fb"))
        let heartRate = services.array.first { $0["uuid"] as? String == "0000180d-0000-1000-8000-00805f9b34fb" }
        #expect(heartRate?["name"] as? String == "Heart Rate")
        let measurement = (heartRate?["characteristics"] as? [[String: Any]])?.first
        #expect(measurement?["name"] as? String == "Heart Rate Measurement")
        #expect(measurement?["flags"] as? [String] == ["notify"])
        #expect(((measurement?["descriptors"] as? [[String: Any]])?.first)?["name"] as? String == "Client Characteristic Configuration")
        let onlyBattery = try await gateway.get(device + "/services?service=180f")
        #expect(onlyBattery.array.count == 2)

        let metadata = try await gateway.get(device + "/characteristics/2a38")
        #expect(metadata.object["uuid"] as? String == "00002a38-0000-1000-8000-00805f9b34fb")
        #expect(metadata.object["service"] as? String == "0000180d-0000-1000-8000-00805f9b34fb")
        let handle = metadata.object["handle"] as? Int ?? 0
        let byHandle = try await gateway.get(device + "/characteristics/handle:\(handle)/value")
        #expect(byHandle.object["value"] as? String == "01")
        let byHexHandle = try await gateway.get(device + "/characteristics/handle:0x\(String(handle, radix: 16))/value")
        #expect(byHexHandle.object["value"] as? String == "01")

        let read = try await gateway.get(device + "/characteristics/2a38/value")
        #expect(read.object["value"] as? String == "01")
        #expect(read.object["encoding"] as? String == "hex")
        let narrowed = try await gateway.get(device + "/characteristics/2a19/value?service=180f")
        #expect(narrowed.status == 409, "two battery services: still ambiguous by service UUID")
        let raw = try await gateway.get(device + "/characteristics/2a38/value", headers: ["Accept": "application/octet-stream"])
        #expect(raw.body == [0x01])
        #expect(raw.contentType == "application/octet-stream")

        let relay = device + "/characteristics/\(TestScenario.relay)"
        #expect(try await gateway.request("PUT", relay + "/value", json: #"{"value":"01"}"#).status == 204)
        #expect(try await gateway.get(relay + "/value").object["value"] as? String == "01")
        #expect(try await gateway.request("PUT", relay + "/value", json: #"{"value":"AQI=","encoding":"base64","type":"command"}"#).status == 204)
        #expect(try await gateway.get(relay + "/value").object["value"] as? String == "0102")
        #expect(try await gateway.request("PUT", relay + "/value?type=request", body: [0xca, 0xfe], headers: ["Content-Type": "application/octet-stream"]).status == 204)
        #expect(try await gateway.get(relay + "/value").object["value"] as? String == "cafe")
        #expect(try await gateway.request("PUT", relay + "/value", json: #"{"value":"on","encoding":"utf8"}"#).status == 204)
        #expect(try await gateway.get(relay + "/value?encoding=utf8").object["value"] as? String == "on")

        let description = try await gateway.get(relay + "/descriptors/2901/value?encoding=utf8")
        #expect(description.object["value"] as? String == "Relay", "\(description)")
        let cccd = try await gateway.request("PUT", relay + "/descriptors/2902/value", json: #"{"value":"0100"}"#)
        #expect([204, 403].contains(cccd.status), "\(cccd)")

        let control = try await gateway.request("PUT", device + "/characteristics/2a39/value", json: #"{"value":"01"}"#)
        #expect(control.status == 204)

        let disconnect = try await gateway.request("POST", device + "/disconnect")
        #expect(disconnect.status == 200, "\(disconnect)")
        #expect(disconnect.object["connected"] as? Bool == false)
        let forget = try await gateway.request("DELETE", device)
        #expect(forget.status == 204, "\(forget)")
        #expect(try await gateway.get(device).status == 404)
        await gateway.stop()
    }
}
