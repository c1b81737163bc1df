import Foundation
import Testing

/// What clients create that outlives their requests is bounded: per client
/// (429) and in all (507), across restarts; an identical standing
/// subscription is the same one (200, not a second).
@Suite struct QuotaTests {
    static func subscription(_ device: String, _ characteristic: String = "2a37") -> String {
        #"{"device":"\#(device)","characteristic":"\#(characteristic)","mode":"notify"}"#
    }

    func expectProblem(
        _ answer: HTTPAnswer, status: Int, type: String, option: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.status == status, "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.contentType == "application/problem+json", "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.object["type"] as? String == "urn:blegateway:problem:\(type)", "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.object["status"] as? Int == status, sourceLocation: sourceLocation)
        #expect(answer.object["instance"] as? String == answer.path, "\(answer)", sourceLocation: sourceLocation)
        let detail = answer.object["detail"] as? String ?? ""
        #expect(detail.contains(option), "names the option: \(detail)", sourceLocation: sourceLocation)
    }

    @Test func subscriptionsArePerClientAndInAllAndIdenticalOnesAreOne() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let limits = ["--max-subscriptions-per-client", "2", "--max-subscriptions", "3"]
        let gateway = try await GatewayUnderTest.start(arguments: limits, stateDirectory: directory)
        let first = try await gateway.request("POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:01"))
        #expect(first.status == 201, "\(first)")
        let id = try #require(first.object["id"] as? Int)
        #expect(first.headers["location"] == "/v1/subscriptions/\(id)")
        // The same again, in another spelling of the address: the same one.
        let again = try await gateway.request("POST", "/v1/subscriptions", json: Self.subscription("aa-00-00-00-00-01"))
        #expect(again.status == 200, "\(again)")
        #expect(again.object["id"] as? Int == id)
        #expect(again.headers["content-location"] == "/v1/subscriptions/\(id)")
        let second = try await gateway.request("POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:02"))
        #expect(second.status == 201, "\(second)")

        let third = try await gateway.request("POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:03"))
        expectProblem(third, status: 429, type: "quota-exceeded", option: "--max-subscriptions-per-client")
        // Another client (another address) has places of its own...
        let other = try await gateway.request(
            "POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:03"), source: "127.0.0.2")
        #expect(other.status == 201, "\(other)")
        // ... until the gateway's total.
        let full = try await gateway.request(
            "POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:04"), source: "127.0.0.3")
        expectProblem(full, status: 507, type: "capacity-exhausted", option: "--max-subscriptions")
        #expect(try await gateway.get("/v1/subscriptions").array.count == 3)
        let problems = try await SpecValidator.problems([
            ("Problem", third.text), ("Problem", full.text), ("StandingSubscription", again.text),
        ])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")

        // Removing one frees its owner's place.
        #expect(try await gateway.request("DELETE", "/v1/subscriptions/\(id)").status == 204)
        let replaced = try await gateway.request("POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:05"))
        #expect(replaced.status == 201, "\(replaced)")
        #expect(await gateway.stop() == 0)

        // After a restart the places are still their owners'.
        let restarted = try await GatewayUnderTest.start(arguments: limits, stateDirectory: directory)
        let after = try await restarted.request("POST", "/v1/subscriptions", json: Self.subscription("AA:00:00:00:00:06"))
        expectProblem(after, status: 429, type: "quota-exceeded", option: "--max-subscriptions-per-client")
        #expect(await restarted.stop() == 0)
    }

    @Test func keptDevicesAreLimitedAndKeepingOneAgainTakesNoNewPlace() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--max-kept-devices", "1", "--max-kept-devices-per-client", "0"])
        let absent = "/v1/devices/AA:00:00:00:00:0A/keep"
        #expect(try await gateway.request("PUT", absent).status == 201)
        #expect(try await gateway.request("PUT", absent, json: #"{"max_attempts":5}"#).status == 200)
        let second = try await gateway.request("PUT", "/v1/devices/AA:00:00:00:00:0B/keep")
        expectProblem(second, status: 507, type: "capacity-exhausted", option: "--max-kept-devices")
        #expect(try await gateway.request("DELETE", absent).status == 204)
        #expect(try await gateway.request("PUT", "/v1/devices/AA:00:00:00:00:0B/keep").status == 201)
        #expect(await gateway.stop() == 0)
    }

    @Test func applicationsAndAdvertisementsAreLimitedPerClient() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: [
            "--max-applications-per-client", "1", "--max-advertisements-per-client", "1",
        ])
        let application = #"{"services":[{"uuid":"180d","characteristics":[{"uuid":"2a37","flags":["read"]}]}]}"#
        let published = try await gateway.request("POST", "/v1/peripheral/applications", json: application)
        #expect(published.status == 201, "\(published)")
        let more = try await gateway.request("POST", "/v1/peripheral/applications", json: application)
        expectProblem(more, status: 429, type: "quota-exceeded", option: "--max-applications-per-client")
        #expect(await gateway.simulator.registeredApplications().count == 1)

        let advertised = try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"one"}"#)
        #expect(advertised.status == 201, "\(advertised)")
        let id = try #require(advertised.object["id"] as? String)
        let another = try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"two"}"#)
        expectProblem(another, status: 429, type: "quota-exceeded", option: "--max-advertisements-per-client")
        #expect(try await gateway.request("DELETE", "/v1/peripheral/advertisements/\(id)").status == 204)
        let replaced = try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"two"}"#)
        #expect(replaced.status == 201, "\(replaced)")
        #expect(await gateway.stop() == 0)
    }

    /// Schema-valid, but 31 bytes cannot hold an iBeacon, an Eddystone URL
    /// and service UUIDs together: a 422 that says so, nothing registered.
    @Test func anAdvertisementTooLargeForItsBytesIsUnprocessable() async throws {
        let gateway = try await GatewayUnderTest.start()
        let crowded = try await gateway.request(
            "POST", "/v1/peripheral/advertisements",
            json: #"""
                {"ibeacon":{"uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","major":1,"minor":2},
                 "eddystone_url":"https://example.com/","service_uuids":["180d","180f"]}
                """#)
        #expect(crowded.status == 422, "\(crowded)")
        #expect(crowded.object["type"] as? String == "urn:blegateway:problem:advertisement-too-large")
        #expect((crowded.object["detail"] as? String ?? "").contains("31"))
        #expect(await gateway.simulator.registeredAdvertisements().isEmpty)
        let problems = try await SpecValidator.problems([("Problem", crowded.text)])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        // The quota place it would have taken is free.
        #expect(try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"fits"}"#).status == 201)
        #expect(await gateway.stop() == 0)
    }
}
