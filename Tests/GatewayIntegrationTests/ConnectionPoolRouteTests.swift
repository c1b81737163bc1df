import Foundation
import TestSupport
import Testing

/// Several adapters as a pool, through HTTP: `POST …/connect` with no
/// `?adapter=` lands on the adapter that hears the device best with a free
/// slot, a full pool answers 503 `no-connection-slot` with `Retry-After`
/// past the request's `timeout_ms`, a queued connection is served when a
/// device disconnects, and the slots show in `/v1/adapters` and `/metrics`.
@Suite struct ConnectionPoolRouteTests {
    static let nearHci1 = "C0:00:00:00:00:11"
    static let nearHci0 = "C0:00:00:00:00:12"
    static let waiting = "C0:00:00:00:00:13"
    static let late = "C0:00:00:00:00:14"

    static let scenario = """
        adapters:
          - id: hci0
          - id: hci1
        devices:
          - address: \(nearHci1)
            heardBy: {hci0: -80, hci1: -45}
            advertising: {interval: 0.5}
          - address: \(nearHci0)
            heardBy: {hci0: -85, hci1: -40}
            advertising: {interval: 0.5}
          - address: \(waiting)
            heardBy: {hci0: -60, hci1: -70}
            advertising: {interval: 0.5}
          - address: \(late)
            heardBy: {hci0: -60, hci1: -70}
            advertising: {interval: 0.5}
        """

    typealias Series = ObservabilityTests.Series

    /// `--use-adapters hci1`: hci0, which hears the device far better, is
    /// neither listed nor used; asking for it is a 404.
    @Test(.timeLimit(.minutes(2))) func aGatewayUsesOnlyTheAdaptersItIsGiven() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.scenario, arguments: ["--use-adapters", "hci1"])
        let adapters = try await gateway.get("/v1/adapters").array
        #expect(adapters.map { $0["name"] as? String } == ["hci1"], "\(adapters)")
        let other = try await gateway.get("/v1/adapters/hci0")
        #expect(other.status == 404, "\(other)")
        try await gateway.discover(Self.waiting)
        let devices = try await gateway.get("/v1/devices").array
        #expect(devices.allSatisfy { $0["adapter"] as? String == "hci1" }, "\(devices)")
        // hci0 hears it at -60, hci1 at -70: hci1 all the same.
        let connect = try await gateway.request("POST", "/v1/devices/\(Self.waiting)/connect")
        #expect(connect.status == 200 && connect.object["adapter"] as? String == "hci1", "\(connect)")
        let refused = try await gateway.request("POST", "/v1/devices/\(Self.late)/connect?adapter=hci0")
        #expect(refused.status == 404, "\(refused)")
        await gateway.stop()
        let bad = try await run([GatewayUnderTest.executable, "serve", "--simulate", "--use-adapters", "hci1", "--adapter", "hci0"])
        #expect(bad.status == 64 && bad.error.contains("not among --use-adapters"), "\(bad.error)")
    }

    @Test(.timeLimit(.minutes(3))) func connectionsFillThePoolQueueAndAreRefusedPastTheirTimeout() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.scenario, arguments: ["--connection-slots", "1"])
        // Scan streams on both adapters keep every object's RSSI fresh.
        let scans = [try gateway.stream("/v1/scan?adapter=hci0"), try gateway.stream("/v1/scan?adapter=hci1")]
        defer { for scan in scans { scan.close() } }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let heard = try await gateway.get("/v1/devices").array.filter { $0["rssi"] != nil }
            if heard.count == 8 { break }
            try await Task.sleep(for: .milliseconds(100))
        }

        let first = try await gateway.request("POST", "/v1/devices/\(Self.nearHci1)/connect")
        #expect(first.status == 200 && first.object["adapter"] as? String == "hci1", "\(first)")
        // hci1 hears it better (-40 against -85) but holds its one slot.
        let second = try await gateway.request("POST", "/v1/devices/\(Self.nearHci0)/connect")
        #expect(second.status == 200 && second.object["adapter"] as? String == "hci0", "\(second)")

        let adapters = try await gateway.get("/v1/adapters").array
        let slots = adapters.map { $0["connection_slots"] as? [String: Int] ?? [:] }
        #expect(slots == Array(repeating: ["limit": 1, "used": 1, "free": 0, "queued": 0], count: 2), "\(adapters)")
        let listing = try await SpecValidator.problems(
            [("Adapter", String(decoding: try JSONSerialization.data(withJSONObject: adapters[0]), as: UTF8.self))])
        #expect(listing.isEmpty, "\(listing.joined(separator: "\n"))")

        // Full: past its timeout a connection is a 503 with Retry-After.
        let refused = try await gateway.request("POST", "/v1/devices/\(Self.late)/connect?timeout_ms=300")
        #expect(refused.status == 503, "\(refused)")
        #expect(refused.object["type"] as? String == "urn:blegateway:problem:no-connection-slot")
        #expect(refused.headers["retry-after"] == "5")
        let problems = try await SpecValidator.problems([("Problem", refused.text)])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")

        // Queued, it waits (seen in /metrics), and is served when a device
        // disconnects.
        let queued = Task { try await gateway.request("POST", "/v1/devices/\(Self.waiting)/connect?timeout_ms=60000") }
        let metrics = try await ObservabilityTests.scrape(gateway) { metrics in
            metrics[Series(name: "blegateway_adapter_queued_connections", labels: ["adapter": "hci0"])] == 1
        }
        for adapter in ["hci0", "hci1"] {
            #expect(metrics[Series(name: "blegateway_adapter_connection_slots_used", labels: ["adapter": adapter])] == 1)
            #expect(metrics[Series(name: "blegateway_adapter_connection_slots_free", labels: ["adapter": adapter])] == 0)
            #expect(metrics[Series(name: "blegateway_adapter_queued_connections", labels: ["adapter": adapter])] == 1)
        }
        #expect(try await gateway.request("POST", "/v1/devices/\(Self.nearHci1)/disconnect").status == 200)
        let served = try await queued.value
        #expect(served.status == 200 && served.object["adapter"] as? String == "hci1", "\(served)")
        let after = try await ObservabilityTests.scrape(gateway) { metrics in
            metrics[Series(name: "blegateway_adapter_queued_connections", labels: ["adapter": "hci0"])] == 0
        }
        #expect(after[Series(name: "blegateway_adapter_queued_connections", labels: ["adapter": "hci1"])] == 0)
        #expect(await gateway.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func aKeepThatNamesNoAdapterIsKeptOnTheOneThatHearsTheDeviceBest() async throws {
        let gateway = try await GatewayUnderTest.start(scenario: Self.scenario)
        let scans = [try gateway.stream("/v1/scan?adapter=hci0"), try gateway.stream("/v1/scan?adapter=hci1")]
        defer { for scan in scans { scan.close() } }
        let deadline = ContinuousClock.now + .seconds(30)
        var heard = 0
        while ContinuousClock.now < deadline, heard < 8 {
            heard = try await gateway.get("/v1/devices").array.filter { $0["rssi"] != nil }.count
            try await Task.sleep(for: .milliseconds(100))
        }
        let keep = try await gateway.request("PUT", "/v1/devices/\(Self.nearHci0)/keep")
        #expect(keep.status == 201, "\(keep)")
        #expect(keep.object["adapter"] as? String == "hci1" && keep.object["via"] as? String == "hci1", "\(keep)")
        let problems = try await SpecValidator.problems([("KeptConnection", keep.text)])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(await gateway.stop() == 0)
    }
}
