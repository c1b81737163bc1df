import Foundation
import Testing

/// Every failure is an RFC 9457 problem with the right status, the BlueZ
/// error name when there was one, and nothing left half-done.
@Suite struct ErrorTests {
    func expectProblem(
        _ answer: HTTPAnswer, _ status: Int, _ kind: String, dbusError: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.status == status, "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.contentType == "application/problem+json", "\(answer)", sourceLocation: sourceLocation)
        let problem = answer.object
        #expect(problem["type"] as? String == "urn:blegateway:problem:\(kind)", "\(answer)", sourceLocation: sourceLocation)
        #expect(problem["status"] as? Int == status, sourceLocation: sourceLocation)
        #expect((problem["title"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        if let path = answer.path {
            #expect(problem["instance"] as? String == path, "\(answer)", sourceLocation: sourceLocation)
        }
        if let dbusError {
            #expect(problem["dbus_error"] as? String == dbusError, "\(answer)", sourceLocation: sourceLocation)
        }
    }

    /// Heads at and past the server's limits (many query items, long
    /// targets, many headers): each is answered, or refused with a problem;
    /// never a closed connection or libmicrohttpd's HTML page.
    @Test func headsAtAndPastTheLimits() async throws {
        let gateway = try await GatewayUnderTest.start()
        let items = { (count: Int) in Array(repeating: "a", count: count).joined(separator: "&") }
        #expect(try await gateway.get("/health?" + items(200)).status == 200)
        #expect(try await gateway.get("/health", headers: ["X-Big": String(repeating: "b", count: 3900)]).status == 200)
        let fields = Dictionary(uniqueKeysWithValues: (1..<200).map { ("X-\($0)", "v") })
        expectProblem(try await gateway.get("/health", headers: fields), 431, "headers-too-large")
        expectProblem(
            try await gateway.get("/health", headers: ["X-Big": String(repeating: "b", count: 11_950)]), 431,
            "headers-too-large")
        expectProblem(try await gateway.get("/health?" + items(10_000)), 414, "invalid-request")
        await gateway.stop()
    }

    @Test func badInput() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"

        let badAddress = try await gateway.get("/v1/devices/AA:BB")
        expectProblem(badAddress, 400, "invalid-request")
        #expect((badAddress.object["invalid_params"] as? [[String: Any]])?.first?["name"] as? String == "address")
        expectProblem(try await gateway.get("/v1/devices/GG:BB:CC:DD:EE:FF"), 400, "invalid-request")
        expectProblem(try await gateway.get(device + "/characteristics/zz/value"), 400, "invalid-request")
        expectProblem(try await gateway.get(device + "/characteristics/handle:x/value"), 400, "invalid-request")
        expectProblem(try await gateway.get(device + "/characteristics/2a38/value?encoding=ebcdic"), 400, "invalid-request")
        expectProblem(try await gateway.get(device + "/characteristics/2a38/value?offset=70000"), 400, "invalid-request")
        expectProblem(try await gateway.get(device + "/characteristics/2a38/value?timeout_ms=0"), 400, "invalid-request")
        expectProblem(try await gateway.get("/v1/devices?connected=maybe"), 400, "invalid-request")
        expectProblem(try await gateway.get("/v1/adapters/wlan0"), 400, "invalid-request")
        expectProblem(try await gateway.get("/v1/events?type=everything"), 400, "invalid-request")
        expectProblem(try await gateway.get("/v1/scan?rssi=-500"), 400, "invalid-request")

        let value = device + "/characteristics/\(TestScenario.relay)/value"
        expectProblem(try await gateway.request("PUT", value, json: "{not json"), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"["01"]"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"{"value":"0g"}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"{"value":"01","encoding":"morse"}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"{"value":"01","type":"shout"}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"{"value":"01","colour":"red"}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: #"{"value":1}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("PUT", value, json: "{}"), 400, "invalid-request")
        expectProblem(
            try await gateway.request("PUT", value, body: Array("01".utf8), headers: ["Content-Type": "text/plain"]),
            415, "unsupported-media-type")
        expectProblem(try await gateway.request("PATCH", "/v1/adapters/hci0", json: #"{"powered":"yes"}"#), 400, "invalid-request")
        expectProblem(try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":999999}"#), 400, "invalid-request")

        // Larger than the server accepts: refused before it is read.
        let large = [UInt8](repeating: 0x30, count: 2 * 1024 * 1024)
        expectProblem(
            try await gateway.request("PUT", value, body: large, headers: ["Content-Type": "application/octet-stream"]),
            413, "payload-too-large")

        expectProblem(try await gateway.get("/v2/things"), 404, "not-found")
        let wrongMethod = try await gateway.request("DELETE", "/v1/adapters")
        expectProblem(wrongMethod, 405, "method-not-allowed")
        #expect(wrongMethod.headers["allow"]?.contains("GET") == true)
        await gateway.stop()
    }

    @Test func bluetoothConditions() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"

        expectProblem(try await gateway.get("/v1/devices/00:11:22:33:44:55"), 404, "not-found")
        expectProblem(try await gateway.get("/v1/adapters/hci7"), 404, "not-found")
        // Any index the kernel can give is a name, known or not.
        expectProblem(try await gateway.get("/v1/adapters/hci1234"), 404, "not-found")
        expectProblem(try await gateway.get("/v1/adapters/hci12345"), 400, "invalid-request")
        // An adapter named in the query of a scan for a duration is that
        // adapter, not the default one.
        expectProblem(
            try await gateway.request("POST", "/v1/scan?adapter=hci9", json: #"{"duration_ms":200}"#), 404, "not-found")
        expectProblem(try await gateway.get("/v1/scan?adapter=hci9"), 404, "not-found")
        // Not connected yet: BlueZ's own words.
        expectProblem(try await gateway.get(device + "/characteristics/2a38/value"), 409, "not-connected")
        expectProblem(try await gateway.get(device + "/services"), 409, "not-connected")

        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        expectProblem(try await gateway.get(device + "/characteristics/2a99/value"), 404, "not-found")
        expectProblem(try await gateway.get(device + "/characteristics/2a38/descriptors/2902/value"), 404, "not-found")

        let ambiguous = try await gateway.get(device + "/characteristics/2a19/value")
        expectProblem(ambiguous, 409, "ambiguous")
        let candidates = ambiguous.object["candidates"] as? [[String: String]] ?? []
        #expect(candidates.count == 2)
        #expect(Set(candidates.compactMap { $0["characteristic"] }) == ["00002a19-0000-1000-8000-00805f9b34fb"])
        // A candidate's handle picks it.
        if let handle = candidates.first?["handle"] {
            #expect(try await gateway.get(device + "/characteristics/handle:\(handle)/value").status == 200)
        }

        expectProblem(
            try await gateway.get(device + "/characteristics/\(TestScenario.writeOnly)/value"), 403, "not-permitted",
            dbusError: "org.bluez.Error.NotPermitted")
        // Needs pairing, and the device refuses it.
        expectProblem(
            try await gateway.get(device + "/characteristics/\(TestScenario.secret)/value"), 403, "not-paired",
            dbusError: "org.bluez.Error.NotPermitted")

        let refused = try await gateway.request("PUT", device + "/characteristics/2a39/value", json: #"{"value":"02"}"#)
        expectProblem(refused, 502, "peripheral-failed", dbusError: "org.bluez.Error.Failed")
        #expect(refused.object["att_error"] as? Int == 0x80)
        #expect((refused.object["detail"] as? String)?.contains("ATT error: 0x80") == true)

        // A command (write without response) must fit in one packet.
        let long = String(repeating: "ab", count: 600)
        let tooLong = try await gateway.request(
            "PUT", device + "/characteristics/\(TestScenario.relay)/value", json: #"{"value":"\#(long)","type":"command"}"#)
        expectProblem(tooLong, 400, "invalid-request")

        let notNotifiable = try await gateway.get(device + "/characteristics/2a38/notifications")
        // The characteristic cannot notify: the client asked for what it
        // cannot do, a 4xx, not a failure of BlueZ or the peripheral.
        expectProblem(notNotifiable, 403, "not-supported")

        let notUTF8 = try await gateway.get(device + "/characteristics/2a38/value?encoding=utf8")
        #expect(notUTF8.status == 200, "01 is valid UTF-8")
        await gateway.stop()
    }

    @Test func timeoutsAndUnconnectableDevices() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let started = ContinuousClock.now
        let slow = try await gateway.request("POST", "/v1/devices/\(TestScenario.slow)/connect?timeout_ms=300")
        expectProblem(slow, 504, "timeout")
        #expect(ContinuousClock.now - started < .seconds(8))
        // The attempt was cancelled, not left running.
        let device = try await gateway.get("/v1/devices/\(TestScenario.slow)")
        #expect(device.object["connected"] as? Bool == false)

        let beacon = try await gateway.request("POST", "/v1/devices/\(TestScenario.beacon)/connect?timeout_ms=20000")
        #expect([502, 504].contains(beacon.status), "\(beacon)")
        #expect(beacon.contentType == "application/problem+json")
        await gateway.stop()
    }

    @Test func connectFindsAnAddressNotScannedAndTimesOutOnOneNeverHeard() async throws {
        let gateway = try await GatewayUnderTest.start()
        // Never scanned: BlueZ does not list it until it is heard.
        expectProblem(try await gateway.get("/v1/devices/\(TestScenario.strap)"), 404, "not-found")
        let connected = try await gateway.request("POST", "/v1/devices/\(TestScenario.strap)/connect?timeout_ms=20000")
        #expect(connected.status == 200, "\(connected)")
        #expect(connected.object["connected"] as? Bool == true)
        #expect(connected.object["services_resolved"] as? Bool == true)

        let nowhere = try await gateway.request("POST", "/v1/devices/12:34:56:78:9A:BC/connect?timeout_ms=400")
        expectProblem(nowhere, 504, "timeout")
        #expect((nowhere.object["detail"] as? String)?.contains("12:34:56:78:9A:BC") == true, "\(nowhere)")
        await gateway.stop()
    }

    @Test func bluetoothdGoneIs503() async throws {
        let gateway = try await GatewayUnderTest.start()
        await gateway.simulator.stop()
        var adapters = try await gateway.get("/v1/adapters")
        for _ in 0..<50 where adapters.status != 503 {
            try await Task.sleep(for: .milliseconds(50))
            adapters = try await gateway.get("/v1/adapters")
        }
        expectProblem(adapters, 503, "bluetoothd-unavailable")
        #expect(try await gateway.get("/health").object["bluez"] as? String == "unavailable")
        expectProblem(try await gateway.request("POST", "/v1/scan", json: "{}"), 503, "bluetoothd-unavailable")
        await gateway.stop()
    }
}
