import Foundation
import Testing

/// Pairing over HTTP: the gateway's agent publishes bluetoothd's questions
/// as `pairing-request` events, and a second client answers them.
@Suite(.serialized) struct PairingRouteTests {
    static let keypad = "E0:11:22:33:44:01"
    static let display = "E0:11:22:33:44:02"
    static let secret = "0000ff03-0000-1000-8000-00805f9b34fb"

    /// A device that shows a passkey (the agent types it), and one that
    /// compares passkeys; both with a characteristic that needs pairing.
    static let yaml = """
        timing: 0.01
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:13"
        devices:
          - address: "\(keypad)"
            addressType: public
            name: Lock 4401
            advertising: { interval: 0.05, uuids: ["ff00"] }
            pairing: { ioCapability: DisplayOnly, passkey: 246810, delay: 0.5 }
            services: &services
              - uuid: "0000ff00-0000-1000-8000-00805f9b34fb"
                characteristics:
                  - uuid: "\(secret)"
                    flags: [read, write]
                    value: "2a2a"
                    encrypted: true
          - address: "\(display)"
            addressType: public
            name: Meter 4402
            advertising: { interval: 0.05, uuids: ["ff00"] }
            pairing: { ioCapability: DisplayYesNo, passkey: 13579, delay: 0.5 }
            services: *services
        """

    static func start(_ arguments: [String] = []) async throws -> GatewayUnderTest {
        try await GatewayUnderTest.start(scenario: yaml, arguments: ["--agent-capability", "KeyboardDisplay"] + arguments)
    }

    @Test func passkeyAnsweredByASecondClientThenEncryptedRead() async throws {
        let gateway = try await Self.start()
        try await gateway.discover(Self.keypad)
        let events = try gateway.stream("/v1/events?type=pairing-request,pairing-request-answered,pairing-succeeded")
        let pairing = Task { try await gateway.request("POST", "/v1/devices/\(Self.keypad)/pair?timeout_ms=30000") }
        let requests = await events.waitFor(1, of: "pairing-request")
        let request = try #require(requests.first?.json)
        #expect(request["kind"] as? String == "passkey")
        #expect(request["address"] as? String == Self.keypad)
        let id = try #require(request["id"] as? String)
        // Listed while it waits.
        #expect(try await gateway.get("/v1/pairing-requests").array.compactMap { $0["id"] as? String } == [id])
        // An answer of the wrong kind is a 400; an unknown id a 404.
        #expect(try await gateway.request("POST", "/v1/pairing-requests/\(id)", json: #"{"confirm":true}"#).status == 400)
        #expect(try await gateway.request("POST", "/v1/pairing-requests/pr-999", json: #"{"passkey":1}"#).status == 404)
        let answer = try await gateway.request("POST", "/v1/pairing-requests/\(id)", json: #"{"passkey":246810}"#)
        #expect(answer.status == 204, "\(answer)")
        let paired = try await pairing.value
        #expect(paired.status == 200, "\(paired)")
        #expect(paired.object["paired"] as? Bool == true)
        #expect(!(await events.waitFor(1, of: "pairing-succeeded")).isEmpty)
        #expect(events.events.contains { $0.type == "pairing-request-answered" })
        let value = try await gateway.get("/v1/devices/\(Self.keypad)/characteristics/\(Self.secret)/value")
        #expect(value.status == 200, "\(value)")
        #expect(value.object["value"] as? String == "2a2a")
        // Unpairing forgets the device.
        #expect(try await gateway.request("DELETE", "/v1/devices/\(Self.keypad)/pair").status == 204)
        #expect(try await gateway.get("/v1/devices/\(Self.keypad)").status == 404)
        events.close()
        await gateway.stop()
    }

    /// With the default agent (NoInputNoOutput), an encrypted read makes
    /// bluetoothd pair by itself (Just Works) and the read answers 200: the
    /// gateway publishes that pairing's `pairing-succeeded` too, and its own
    /// pairings still publish exactly one.
    @Test func bluetoothdPairingByItselfIsPublished() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.yaml)
        try await gateway.discover(Self.keypad, Self.display)
        let events = try gateway.stream("/v1/events?type=pairing-succeeded")
        #expect(try await gateway.request("POST", "/v1/devices/\(Self.keypad)/connect").status == 200)
        let read = try await gateway.get("/v1/devices/\(Self.keypad)/characteristics/\(Self.secret)/value")
        #expect(read.status == 200, "\(read.text)")
        let byBluetoothd = try #require(await events.waitFor(1, of: "pairing-succeeded").first?.json)
        #expect(byBluetoothd["address"] as? String == Self.keypad)
        #expect(byBluetoothd["paired"] as? Bool == true)

        #expect(try await gateway.request("POST", "/v1/devices/\(Self.display)/pair?timeout_ms=30000").status == 200)
        #expect(await events.waitFor(2, of: "pairing-succeeded").count == 2)
        // Another read of the paired device, and time for a duplicate to show.
        #expect(try await gateway.get("/v1/devices/\(Self.display)/characteristics/\(Self.secret)/value").status == 200)
        let all = await events.waitFor(timeout: .seconds(2)) { $0.count > 2 }
        #expect(all.filter { $0.json["address"] as? String == Self.display }.count == 1, "\(all.map(\.data))")
        events.close()
        #expect(await gateway.stop() == 0)
    }

    @Test func rejectedConfirmationIsAPairingRejectedProblem() async throws {
        let gateway = try await Self.start()
        try await gateway.discover(Self.display)
        let events = try gateway.stream("/v1/events?type=pairing-request,pairing-failed")
        let pairing = Task { try await gateway.request("POST", "/v1/devices/\(Self.display)/pair?timeout_ms=30000") }
        let request = try #require(await events.waitFor(1, of: "pairing-request").first?.json)
        #expect(request["kind"] as? String == "confirmation")
        #expect(request["passkey"] as? String == "013579")
        let id = try #require(request["id"] as? String)
        #expect(try await gateway.request("POST", "/v1/pairing-requests/\(id)", json: #"{"confirm":false}"#).status == 204)
        let refused = try await pairing.value
        #expect(refused.status == 403, "\(refused)")
        #expect(refused.object["type"] as? String == "urn:blegateway:problem:pairing-rejected")
        let failed = try #require(await events.waitFor(1, of: "pairing-failed").first?.json)
        #expect(failed["problem"] as? String == "urn:blegateway:problem:pairing-rejected")
        events.close()
        await gateway.stop()
    }

    @Test func unansweredRequestExpires() async throws {
        let gateway = try await Self.start(["--pairing-request-timeout", "1"])
        try await gateway.discover(Self.display)
        let events = try gateway.stream("/v1/events?type=pairing-request-expired")
        let refused = try await gateway.request("POST", "/v1/devices/\(Self.display)/pair?timeout_ms=30000")
        #expect(refused.status == 403, "\(refused)")
        #expect(refused.object["type"] as? String == "urn:blegateway:problem:pairing-rejected")
        #expect((refused.object["detail"] as? String)?.contains("nobody answered") == true)
        #expect(!(await events.waitFor(1, of: "pairing-request-expired")).isEmpty)
        events.close()
        await gateway.stop()
    }

    @Test func pairAutoPairsBeforeGivingUp() async throws {
        // The test scenario's strap refuses pairing: its secret stays out
        // of reach, but `?pair=auto` tries (and says why it failed).
        let gateway = try await GatewayUnderTest.start()
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let value = device + "/characteristics/\(TestScenario.secret)/value"
        let plain = try await gateway.get(value)
        #expect(plain.status == 403 && plain.object["type"] as? String == "urn:blegateway:problem:not-paired", "\(plain)")
        let auto = try await gateway.get(value + "?pair=auto")
        #expect(auto.status == 403, "\(auto)")
        #expect(auto.object["type"] as? String == "urn:blegateway:problem:authentication-failed", "\(auto)")
        #expect(try await gateway.get(value + "?pair=always").status == 400)
        await gateway.stop()
    }

    @Test func trustedAndBlockedArePatched() async throws {
        let gateway = try await Self.start()
        try await gateway.discover(Self.display)
        let trusted = try await gateway.request("PATCH", "/v1/devices/\(Self.display)", json: #"{"trusted":true}"#)
        #expect(trusted.status == 200, "\(trusted)")
        #expect(trusted.object["trusted"] as? Bool == true)
        let bad = try await gateway.request("PATCH", "/v1/devices/\(Self.display)", json: #"{"paired":true}"#)
        #expect(bad.status == 400)
        await gateway.stop()
    }
}
