import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Beacons and sensors over HTTP: the default scenario's advertisements
/// decoded, raw data and last-seen, the scan filters, presence, and the MTU
/// of a connection.
@Suite struct AdvertisementTests {
    static let iBeacon = "F1:E2:D3:C4:B5:A6"
    static let eddystoneURL = "E7:1D:5A:3C:90:11"
    static let eddystoneTLM = "E7:1D:5A:3C:90:12"
    static let eddystoneUID = "E7:1D:5A:3C:90:13"
    static let bthome = "A4:C1:38:8E:2F:55"
    static let thermometer = "A4:C1:38:2F:1B:07"
    static let strap = "C4:7C:8D:6A:3E:01"

    /// The default scenario with short latencies (its advertising
    /// intervals, 0.2 to 2 s, are not scaled).
    static var defaultScenario: String {
        Scenario.defaultYAML.replacing("timing: 1 ", with: "timing: 0.05 ")
    }

    static func device(_ event: ReceivedEvent) -> [String: Any] {
        event.json["device"] as? [String: Any] ?? [:]
    }

    static func address(_ event: ReceivedEvent) -> String? {
        device(event)["address"] as? String
    }

    static func decoded(_ device: [String: Any]) -> [[String: Any]] {
        device["decoded"] as? [[String: Any]] ?? []
    }

    @Test func aScanOfTheDefaultScenarioShowsBeaconsDecodedRawDataAndLastSeen() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.defaultScenario, experimental: true)
        let scenario = try Scenario.parse(Self.defaultScenario)
        let everyone = Set(scenario.devices.map(\.address.description))
        #expect(everyone.count == 8)
        let stream = try gateway.stream("/v1/scan")
        let events = await stream.waitFor(timeout: .seconds(30)) { events in
            Set(events.filter { $0.type == "discovered" }.compactMap(Self.address)) == everyone
        }
        let discovered = Dictionary(
            events.filter { $0.type == "discovered" }.map { (Self.address($0) ?? "", Self.device($0)) },
            uniquingKeysWith: { first, _ in first })
        #expect(Set(discovered.keys) == everyone)
        for (address, device) in discovered {
            #expect(device["last_seen"] is String, "\(address) has last_seen")
            #expect(device["advertising_flags"] is String, "\(address) has its AD flags (bluetoothd -E)")
            #expect(device["decoded"] is [Any], "\(address) has decoded")
        }

        let beacon = try #require(Self.decoded(discovered[Self.iBeacon] ?? [:]).first)
        #expect(beacon["format"] as? String == "ibeacon")
        #expect(beacon["company_id"] as? Int == 0x004C)
        #expect(beacon["uuid"] as? String == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(beacon["major"] as? Int == 1)
        #expect(beacon["minor"] as? Int == 2)
        #expect(beacon["measured_power"] as? Int == -59)

        let url = try #require(discovered[Self.eddystoneURL])
        #expect(Self.decoded(url).first?["format"] as? String == "eddystone-url")
        #expect(Self.decoded(url).first?["url"] as? String == "https://google.com")
        // The URI AD type (0x24), which bluetoothd keeps raw.
        #expect((url["advertising_data"] as? [String: String])?["24"] == "172f2f676f6f676c652e636f6d")

        let tlm = try #require(Self.decoded(discovered[Self.eddystoneTLM] ?? [:]).first)
        #expect(tlm["format"] as? String == "eddystone-tlm")
        #expect(tlm["battery_mv"] as? Int == 3000)
        #expect(tlm["temperature"] as? Double == 22.5)

        let uid = try #require(Self.decoded(discovered[Self.eddystoneUID] ?? [:]).first)
        #expect(uid["format"] as? String == "eddystone-uid")
        #expect(uid["tx_power"] as? Int == -20)
        #expect(uid["namespace"] as? String == "00112233445566778899")
        #expect(uid["instance"] as? String == "aabbccddeeff")

        let sensor = try #require(Self.decoded(discovered[Self.bthome] ?? [:]).first)
        #expect(sensor["format"] as? String == "bthome")
        #expect(sensor["service_uuid"] as? String == "0000fcd2-0000-1000-8000-00805f9b34fb")
        #expect(sensor["temperature"] as? Double == 25)
        #expect(sensor["humidity"] as? Double == 50.55)
        #expect(sensor["battery"] as? Int == 97)
        // Devices without a known frame decode to nothing.
        #expect(Self.decoded(discovered[Self.strap] ?? [:]).isEmpty)

        // The events hold to the contract.
        let documents = events.filter { $0.type == "discovered" }.map { (schema: "ScanEvent", json: $0.data) }
        let problems = try await SpecValidator.problems(documents)
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")

        // GET /v1/devices shows the same, with when each was last heard.
        let listed = try await gateway.get("/v1/devices").array
        #expect(listed.count == 8)
        #expect(listed.allSatisfy { $0["last_seen"] is String })
        stream.close()
        await gateway.stop()
    }

    @Test func filtersByAddressPrefixAndServiceData() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.defaultScenario)
        // The thermometer shares the sensor's prefix but has no BTHome data.
        let stream = try gateway.stream("/v1/scan?address_prefix=a4-c1&service_data=fcd2")
        let found = await stream.waitFor(1, of: "discovered")
        #expect(found.compactMap(Self.address) == [Self.bthome])
        let both = try gateway.stream("/v1/scan?address_prefix=A4:C1:38")
        let seen = await both.waitFor { Set($0.compactMap(Self.address)) == [Self.bthome, Self.thermometer] }
        #expect(Set(seen.compactMap(Self.address)) == [Self.bthome, Self.thermometer])
        #expect(stream.events.compactMap(Self.address).allSatisfy { $0 == Self.bthome })

        // The same filters in the body of POST /v1/scan.
        let result = try await gateway.request(
            "POST", "/v1/scan", json: #"{"duration_ms":2500,"address_prefix":"e7:1d","service_data":["feaa"]}"#)
        #expect(result.status == 200)
        let addresses = Set((result.object["devices"] as? [[String: Any]] ?? []).compactMap { $0["address"] as? String })
        #expect(addresses.isSubset(of: [Self.eddystoneURL, Self.eddystoneTLM, Self.eddystoneUID]) && !addresses.isEmpty)

        let bad = try await gateway.get("/v1/scan?address_prefix=zz")
        #expect(bad.status == 400)
        #expect(String(decoding: bad.body, as: UTF8.self).contains("address_prefix"))
        let badSmoothing = try await gateway.request("POST", "/v1/scan", json: #"{"rssi_smoothing":0}"#)
        #expect(badSmoothing.status == 400)
        // A JSON number only: not Swift's hex floats.
        #expect(try await gateway.get("/v1/scan?rssi_smoothing=0x1").status == 400)
        #expect(try await gateway.get("/v1/scan?rssi_smoothing=1.5").status == 400)
        stream.close()
        both.close()
        await gateway.stop()
    }

    @Test func aSilentDeviceIsLostAfterThePresenceTimeout() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.defaultScenario)
        // The beacon advertises every second with a changing sequence
        // number: heard at every report.
        let stream = try gateway.stream("/v1/scan?address=\(Self.iBeacon)&presence_timeout_ms=3000&rssi_smoothing=0.3")
        let found = await stream.waitFor(1, of: "discovered")
        #expect(found.count == 1)
        #expect(Self.device(found[0])["rssi_smoothed"] is Double)
        try await gateway.simulator.setInRange(false, try #require(DeviceAddress(Self.iBeacon)))
        let lost = await stream.waitFor(1, of: "lost")
        #expect(lost.first?.json["reason"] as? String == "timeout")
        // bluetoothd still lists it (its TemporaryTimeout has not passed).
        #expect(try await gateway.get("/v1/devices/\(Self.iBeacon)").status == 200)
        // Back in range, it is discovered again.
        try await gateway.simulator.setInRange(true, try #require(DeviceAddress(Self.iBeacon)))
        let again = await stream.waitFor(2, of: "discovered")
        #expect(again.count == 2)
        stream.close()
        await gateway.stop()
    }

    @Test func aConnectedDeviceReportsItsMTU() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.defaultScenario)
        try await gateway.discover(Self.strap)
        let before = try await gateway.get("/v1/devices/\(Self.strap)")
        #expect(before.object["mtu"] == nil, "no MTU without a connection")
        let connected = try await gateway.request("POST", "/v1/devices/\(Self.strap)/connect")
        #expect(connected.status == 200)
        #expect(connected.object["mtu"] as? Int == 517)
        #expect(try await gateway.get("/v1/devices/\(Self.strap)").object["mtu"] as? Int == 517)
        let services = try await gateway.get("/v1/devices/\(Self.strap)/services").array
        let mtus = services.flatMap { ($0["characteristics"] as? [[String: Any]] ?? []).compactMap { $0["mtu"] as? Int } }
        #expect(!mtus.isEmpty && mtus.allSatisfy { $0 == 517 })
        _ = try await gateway.request("POST", "/v1/devices/\(Self.strap)/disconnect")
        #expect(try await gateway.get("/v1/devices/\(Self.strap)").object["mtu"] == nil)
        await gateway.stop()
    }
}

/// Links over HTTP: included services, indications, reliable writes, and
/// two adapters told apart by `?adapter=`.
@Suite struct LinkTests {
    static let device = "C4:7C:8D:6A:3E:42"
    static let scenario = """
        timing: 0.05
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:13"
            name: first
          - id: hci1
            address: "00:1A:7D:DA:71:14"
            name: second
        devices:
          - address: "\(device)"
            addressType: random
            adapter: hci1
            name: Linked
            advertising:
              interval: 0.05
            services:
              - uuid: "1809"
                includes: ["180f"]
                characteristics:
                  - uuid: "2a1c"
                    flags: [indicate]
                    behaviour: { kind: thermometer, celsius: 21.5, variation: 0.3, rate: 20 }
              - uuid: "180f"
                primary: false
                characteristics:
                  - uuid: "2a19"
                    flags: [read]
                    value: "57"
              - uuid: "0000ff00-0000-1000-8000-00805f9b34fb"
                characteristics:
                  - uuid: "0000ff01-0000-1000-8000-00805f9b34fb"
                    flags: [read, write, reliable-write]
                    value: "00"
                    behaviour: echo
        """

    @Test func includesIndicationsAndReliableWritesOnASecondAdapter() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.scenario)
        // Only hci1 hears the device.
        let scan = try gateway.stream("/v1/scan?adapter=hci1")
        let found = await scan.waitFor(1, of: "discovered")
        #expect(found.first.flatMap { ($0.json["device"] as? [String: Any])?["adapter"] as? String } == "hci1")
        scan.close()
        #expect(try await gateway.get("/v1/devices?adapter=hci0").array.isEmpty)
        #expect(try await gateway.get("/v1/devices/\(Self.device)?adapter=hci0").status == 404)
        #expect(try await gateway.get("/v1/devices/\(Self.device)?adapter=hci1").status == 200)
        let connected = try await gateway.request("POST", "/v1/devices/\(Self.device)/connect?adapter=hci1")
        #expect(connected.status == 200)
        #expect(connected.object["adapter"] as? String == "hci1")

        let services = try await gateway.get("/v1/devices/\(Self.device)/services?adapter=hci1").array
        let thermometer = try #require(services.first { ($0["uuid"] as? String)?.hasPrefix("00001809") == true })
        let includes = thermometer["includes"] as? [[String: Any]] ?? []
        #expect(includes.compactMap { $0["uuid"] as? String } == ["0000180f-0000-1000-8000-00805f9b34fb"])
        let battery = services.first { ($0["uuid"] as? String)?.hasPrefix("0000180f") == true }
        #expect(includes.first?["handle"] as? Int == battery?["handle"] as? Int)

        // Indications arrive like notifications.
        let indications = try gateway.stream("/v1/devices/\(Self.device)/characteristics/2a1c/notifications?adapter=hci1")
        let values = await indications.waitFor(2, of: "notification")
        #expect(values.count >= 2)
        indications.close()

        // A reliable write (prepared and executed) is read back.
        let relay = "/v1/devices/\(Self.device)/characteristics/0000ff01-0000-1000-8000-00805f9b34fb/value"
        let write = try await gateway.request("PUT", relay + "?adapter=hci1&type=reliable", json: #"{"value":"01"}"#)
        #expect(write.status == 204 || write.status == 200, "\(String(decoding: write.body, as: UTF8.self))")
        #expect(try await gateway.get(relay + "?adapter=hci1").object["value"] as? String == "01")
        await gateway.stop()
    }
}
