import Foundation
import TestSupport
import Testing

/// `mode=passive` on /v1/scan: an advertisement monitor where the
/// (simulated) bluetoothd runs with -E, a clear problem or the low-duty
/// fallback where it does not.
@Suite struct PassiveScanRouteTests {
    static func addresses(_ answer: HTTPAnswer) -> Set<String> {
        Set(((answer.object["devices"] as? [[String: Any]]) ?? []).compactMap { $0["address"] as? String })
    }

    @Test func aPassiveStreamReportsWhatItsPatternsMatchWithoutDiscovering() async throws {
        let gateway = try await GatewayUnderTest.start(experimental: true)
        // The strap's manufacturer data: company 0x006b, little endian.
        let stream = try gateway.stream("/v1/scan?mode=passive&pattern=0:ff:6b00")
        let found = await stream.waitFor(1, of: "discovered")
        #expect(found.first?.json["device"].flatMap { ($0 as? [String: Any])?["address"] as? String } == TestScenario.strap)
        #expect(try await gateway.get("/v1/adapters/hci0").object["discovering"] as? Bool == false)
        stream.close()
        await gateway.stop()
    }

    @Test func aTimedPassiveScanDerivesItsPatternsFromTheFilter() async throws {
        let gateway = try await GatewayUnderTest.start(experimental: true)
        let scan = try await gateway.request(
            "POST", "/v1/scan", json: #"{"duration_ms":3000,"mode":"passive","services":["180d"]}"#)
        #expect(scan.status == 200, "\(scan)")
        #expect(Self.addresses(scan) == [TestScenario.strap])
        #expect(scan.object["mode"] as? String == "passive")
        await gateway.stop()
    }

    @Test func passiveScanProblems() async throws {
        let gateway = try await GatewayUnderTest.start()
        // No monitor manager without -E: a 403 that says how to get one.
        let unsupported = try await gateway.request(
            "POST", "/v1/scan", json: #"{"duration_ms":500,"mode":"passive","patterns":["0:ff:6b00"]}"#)
        #expect(unsupported.status == 403, "\(unsupported)")
        let detail = unsupported.object["detail"] as? String ?? ""
        #expect(detail.contains("-E") && detail.contains("fallback=low-duty"), "\(detail)")
        // Nothing to listen for.
        let noPattern = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":500,"mode":"passive"}"#)
        #expect(noPattern.status == 400, "\(noPattern)")
        #expect(noPattern.object["detail"] as? String ?? "" != "")
        for bad in ["?mode=passive&pattern=0:ff:zz", "?mode=passive&pattern=0:00:01", "?mode=sideways",
            "?mode=passive&pattern=0:ff:6b00&fallback=often"]
        {
            let answer = try await gateway.get("/v1/scan" + bad)
            #expect(answer.status == 400, "\(bad): \(answer)")
        }
        await gateway.stop()
    }

    @Test func theLowDutyFallbackFindsDevicesWithoutAMonitor() async throws {
        let gateway = try await GatewayUnderTest.start()
        // A timed scan: long enough (most of the first 10 s window) that a
        // loaded machine's late start of discovery still hears the strap.
        let scan = try await gateway.request(
            "POST", "/v1/scan",
            json: #"{"duration_ms":7000,"mode":"passive","patterns":["0:ff:6b00"],"fallback":"low-duty","services":["180d"]}"#)
        #expect(scan.status == 200, "\(scan)")
        #expect(Self.addresses(scan) == [TestScenario.strap])
        await gateway.stop()
    }
}
