import BlueZSimulator
import Foundation
import Glibc
import TestSupport
import Testing

/// The peripheral role over HTTP: the gateway publishes an application and
/// an advertisement on the simulator's adapter, and the simulator's remote
/// central uses them over the real bus.
@Suite struct PeripheralTests {
    static let heartRate = GATTUUID("2a37")!
    static let control = GATTUUID("2a39")!
    static let secret = GATTUUID("ff01")!
    static let location = GATTUUID("2a38")!
    static let application = """
        {"services":[{"uuid":"180d","characteristics":[
          {"uuid":"2a37","flags":["read","notify"],"value":"0048"},
          {"uuid":"2a39","flags":["read","write"],"value":"00",
           "descriptors":[{"uuid":"2901","flags":["read"],"value":"control","encoding":"utf8"}]},
          {"uuid":"ff01","flags":["read","write"],"delegate":true},
          {"uuid":"2a38","flags":["read","indicate"],"value":"01"}]}]}
        """

    @Test func aCentralReadsWritesAndSubscribes() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/peripheral/events")
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: Self.application)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? String)
        #expect(created.headers["location"] == "/v1/peripheral/applications/\(id)")
        #expect(created.object["registered"] as? Bool == true)
        #expect(await gateway.simulator.registeredApplications().count == 1)

        // Reads come from the stored value.
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x48])

        // A write is stored and reported.
        try await gateway.simulator.centralWrite([0x01], adapter: "hci0", characteristic: Self.control)
        let written = await events.waitFor(1, of: "written")
        #expect(written.first?.json["value"] as? String == "01")
        #expect(written.first?.json["central"] as? String == "11:22:33:44:55:66")
        #expect(try await gateway.get("/v1/peripheral/applications/\(id)/characteristics/2a39/value").object["value"] as? String == "01")
        #expect(await events.waitFor(1, of: "central-connected").count == 1)

        // bluetoothd refuses what the flags do not allow, without asking.
        await #expect(throws: CentralATTError(code: 0x03)) {
            try await gateway.simulator.centralWrite([0x01], adapter: "hci0", characteristic: Self.heartRate)
        }

        // Subscribing is an event; the gateway's PUT notifies the central.
        try await gateway.simulator.centralSubscribe(adapter: "hci0", characteristic: Self.heartRate)
        #expect(await events.waitFor(1, of: "subscribed").first?.json["characteristic"] as? String
            == "00002a37-0000-1000-8000-00805f9b34fb")
        let put = try await gateway.request(
            "PUT", "/v1/peripheral/applications/\(id)/characteristics/2a37/value", json: #"{"value":"0050"}"#)
        #expect(put.status == 200 && put.object["notified"] as? Bool == true, "\(put)")
        #expect(try await eventually {
            try await gateway.simulator.centralReceived(adapter: "hci0", characteristic: Self.heartRate) == [[0x00, 0x50]]
        })
        try await gateway.simulator.centralUnsubscribe(adapter: "hci0", characteristic: Self.heartRate)
        #expect(await events.waitFor(1, of: "unsubscribed").count == 1)

        // An indication: the PUT returns once the central confirmed it.
        try await gateway.simulator.centralSubscribe(adapter: "hci0", characteristic: Self.location)
        _ = await events.waitFor(2, of: "subscribed")
        for value in ["02", "03"] {
            let indicated = try await gateway.request(
                "PUT", "/v1/peripheral/applications/\(id)/characteristics/2a38/value", json: #"{"value":"\#(value)"}"#)
            #expect(indicated.status == 200 && indicated.object["notified"] as? Bool == true, "\(indicated)")
        }
        #expect(try await gateway.simulator.centralReceived(adapter: "hci0", characteristic: Self.location) == [[0x02], [0x03]])

        // Bodies and events are as openapi.yaml says.
        let listed = try await gateway.get("/v1/peripheral/applications")
        var documents: [(schema: String, json: String)] = [("PublishedApplication", created.text)]
        documents += (listed.json as? [Any] ?? []).compactMap { element in
            (try? JSONSerialization.data(withJSONObject: element)).map { ("PublishedApplication", String(decoding: $0, as: UTF8.self)) }
        }
        documents += events.events.map { ("PeripheralEvent", $0.data) }
        #expect(documents.count >= 7)
        let problems = try await SpecValidator.problems(documents)
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))")

        // Deleting unregisters it from bluetoothd.
        let deleted = try await gateway.request("DELETE", "/v1/peripheral/applications/\(id)")
        #expect(deleted.status == 204)
        #expect(await gateway.simulator.registeredApplications().isEmpty)
        #expect(try await gateway.get("/v1/peripheral/applications/\(id)").status == 404)
        events.close()
        await gateway.stop()
    }

    @Test func badDefinitionsAreClearProblems() async throws {
        let gateway = try await GatewayUnderTest.start()
        let flag = try await gateway.request(
            "POST", "/v1/peripheral/applications",
            json: #"{"services":[{"uuid":"180d","characteristics":[{"uuid":"2a37","flags":["read","shout"]}]}]}"#)
        #expect(flag.status == 400 && flag.text.contains("shout"), "\(flag)")
        let cccd = try await gateway.request(
            "POST", "/v1/peripheral/applications",
            json: #"{"services":[{"uuid":"180d","characteristics":[{"uuid":"2a37","flags":["notify"],"descriptors":[{"uuid":"2902"}]}]}]}"#)
        #expect(cccd.status == 400, "\(cccd)")
        let empty = try await gateway.request("POST", "/v1/peripheral/applications", json: #"{"services":[]}"#)
        #expect(empty.status == 400, "\(empty)")
        let adapter = try await gateway.request(
            "POST", "/v1/peripheral/applications", json: #"{"adapter":"hci9","services":[{"uuid":"180d"}]}"#)
        #expect(adapter.status == 404, "\(adapter)")
        let error = try await gateway.request("POST", "/v1/peripheral/requests/req1", json: #"{"att_error":1}"#)
        #expect(error.status == 400, "\(error)")
        #expect(try await gateway.request("POST", "/v1/peripheral/requests/req1", json: #"{"value":"00"}"#).status == 404)
        #expect(await gateway.simulator.registeredApplications().isEmpty)
        await gateway.stop()
    }

    @Test func delegatedRequestsAreAnsweredOverHTTPOrFailInTime() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/peripheral/events?type=request,request-expired")
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: Self.application)
        #expect(created.status == 201, "\(created)")

        // A client answers the read with a value.
        async let read = gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.secret)
        let request = try #require(await events.waitFor(1, of: "request").first)
        let requestID = try #require(request.json["id"] as? String)
        #expect(request.json["kind"] as? String == "read")
        #expect(request.json["timeout_ms"] as? Int == 10_000)
        let answer = try await gateway.request("POST", "/v1/peripheral/requests/\(requestID)", json: #"{"value":"cafe"}"#)
        #expect(answer.status == 204, "\(answer)")
        #expect(try await read == [0xca, 0xfe])
        // Answered once only.
        #expect(try await gateway.request("POST", "/v1/peripheral/requests/\(requestID)", json: #"{"value":"00"}"#).status == 404)

        // An ATT error from the client reaches the central.
        let refused = Task { try await gateway.simulator.centralWrite([0x01], adapter: "hci0", characteristic: Self.secret) }
        let write = try #require(await events.waitFor(2, of: "request").last)
        #expect(write.json["kind"] as? String == "write" && write.json["value"] as? String == "01")
        let writeID = try #require(write.json["id"] as? String)
        #expect(try await gateway.request("POST", "/v1/peripheral/requests/\(writeID)", json: #"{"att_error":128}"#).status == 204)
        await #expect(throws: CentralATTError(code: 0x80)) { try await refused.value }

        // Nobody answers: the central gets Unlikely Error at the deadline.
        await #expect(throws: CentralATTError(code: 0x0e)) {
            _ = try await gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.secret)
        }
        #expect(await events.waitFor(1, of: "request-expired").count == 1)
        events.close()
        await gateway.stop()
    }

    @Test func advertisementsAndLimits() async throws {
        let gateway = try await GatewayUnderTest.start()
        let created = try await gateway.request(
            "POST", "/v1/peripheral/advertisements",
            json: #"{"local_name":"thermo","service_uuids":["180d"],"manufacturer_data":{"0xffff":"0102"},"appearance":832,"include_tx_power":true}"#)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? String)
        let registered = await gateway.simulator.registeredAdvertisements()
        #expect(registered.count == 1)
        #expect(registered.first?.properties["LocalName"]?.string == "thermo")
        #expect(registered.first?.properties["Appearance"]?.uint16 == 832)

        // Data too long is refused before bluetoothd is asked: well formed,
        // but it cannot be sent.
        let long = try await gateway.request(
            "POST", "/v1/peripheral/advertisements", json: #"{"manufacturer_data":{"76":"00112233445566778899aabbccddeeff001122334455667788"}}"#)
        #expect(long.status == 422, "\(long)")
        #expect(long.object["type"] as? String == "urn:blegateway:problem:advertisement-too-large")
        #expect(long.object["detail"].map { "\($0)".contains("31") } == true)

        // The fifth instance is the last; the sixth is a 409.
        for _ in 0..<4 {
            let beacon = try await gateway.request(
                "POST", "/v1/peripheral/advertisements",
                json: #"{"ibeacon":{"uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","major":1,"minor":2}}"#)
            #expect(beacon.status == 201, "\(beacon)")
        }
        let sixth = try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"eddystone_url":"https://example.com/"}"#)
        #expect(sixth.status == 409, "\(sixth)")
        #expect(sixth.object["dbus_error"] as? String == "org.bluez.Error.NotPermitted" || sixth.text.contains("NotPermitted"))
        let capacity = try await gateway.get("/v1/peripheral/advertising")
        #expect(capacity.object["supported_instances"] as? Int == 5 && capacity.object["active_instances"] as? Int == 5)

        let problems = try await SpecValidator.problems([
            ("PublishedAdvertisement", created.text), ("Problem", long.text), ("Problem", sixth.text),
        ])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(try await gateway.request("DELETE", "/v1/peripheral/advertisements/\(id)").status == 204)
        #expect(await gateway.simulator.registeredAdvertisements().count == 4)
        await gateway.stop()
    }

    @Test func aCentralThatDisconnectsIsGoneAndIsSeenAgainWhenItComesBack() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/peripheral/events")
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: Self.application)
        let id = try #require(created.object["id"] as? String)
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x48])
        try await gateway.simulator.centralSubscribe(adapter: "hci0", characteristic: Self.heartRate)
        #expect(await events.waitFor(1, of: "subscribed").count == 1)
        #expect(await events.waitFor(1, of: "central-connected").first?.json["central"] as? String == "11:22:33:44:55:66")

        // Its link goes down: bluetoothd ends its subscription, and the
        // gateway says it is gone.
        try await gateway.simulator.centralDisconnect(adapter: "hci0")
        #expect(await events.waitFor(1, of: "unsubscribed").count == 1)
        let gone = await events.waitFor(1, of: "central-disconnected").first?.json
        #expect(gone?["central"] as? String == "11:22:33:44:55:66")
        #expect(gone?["application"] as? String == id && gone?["adapter"] as? String == "hci0")

        // Back, it is a new connection: seen again with its first request.
        _ = try await gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate)
        #expect(await events.waitFor(2, of: "central-connected").count == 2)
        events.close()
        await gateway.stop()
    }

    @Test func everythingIsRegisteredAgainAfterABluetoothdRestart() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/peripheral/events?type=reregistered")
        #expect(try await gateway.request("POST", "/v1/peripheral/applications", json: Self.application).status == 201)
        #expect(try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"again"}"#).status == 201)
        try await gateway.simulator.restart()
        #expect(await events.waitFor(2, of: "reregistered").count == 2)
        #expect(await gateway.simulator.registeredApplications().count == 1)
        #expect(await gateway.simulator.registeredAdvertisements().count == 1)
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x48])

        // Nothing stays registered once the gateway stopped.
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.wait(timeout: .seconds(20)) == 0)
        #expect(await gateway.simulator.registeredApplications().isEmpty)
        #expect(await gateway.simulator.registeredAdvertisements().isEmpty)
        events.close()
        await gateway.stop()
    }
}
