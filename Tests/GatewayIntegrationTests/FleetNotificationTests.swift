import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// Notification streams through any gateway of the fleet: two
/// `blegateway serve --mqtt` processes on one mosquitto, each over its own
/// simulator; a stream opened on g-a of a device only g-b hears is held by
/// g-b under a lease (docs/fleet.md, "Notifications through the fleet").
@Suite(.serialized) struct FleetNotificationTests {
    static let onlyB = FleetHTTPTests.onlyB
    static let auth = FleetHTTPTests.auth
    static let stream = "/v1/fleet/devices/\(onlyB)/characteristics/2a19/notifications"
    static let battery = "00002a19-0000-1000-8000-00805f9b34fb"

    /// Whether g-b's BlueZ has the battery level notifying (some
    /// subscription holds it), as g-b's own API says.
    static func notifying(_ b: GatewayUnderTest) async throws -> Bool? {
        try await b.get("/v1/devices/\(onlyB)/characteristics/2a19", headers: auth).object["notifying"] as? Bool
    }

    static func waitNotifying(_ b: GatewayUnderTest, _ expected: Bool, timeout: Duration) async -> Bool {
        await FleetHTTPTests.poll(timeout: timeout) { try await notifying(b) } until: { $0 == expected }.0
    }

    /// Sets the battery level on g-b's simulator until `stream` has it (the
    /// stream's lease may still be on its way): whether it arrived.
    static func deliver(_ value: UInt8, on b: GatewayUnderTest, to stream: EventStreamClient, hex: String) async throws
        -> Bool
    {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            try await b.simulator.setValue(
                [value], characteristic: try #require(GATTUUID("2a19")), of: try #require(DeviceAddress(onlyB)))
            let received = await stream.waitFor(timeout: .seconds(2)) { events in
                events.contains { $0.type == "notification" && $0.data.contains("\"\(hex)\"") }
            }
            if received.contains(where: { $0.type == "notification" && $0.data.contains("\"\(hex)\"") }) { return true }
        }
        return false
    }

    @Test func aStreamThroughAnyGatewayIsHeldUnderALeaseByTheGatewayThatHasTheDevice() async throws {
        let broker = try await Broker.start()
        let a = try await GatewayUnderTest.start(
            scenario: FleetHTTPTests.scenario(
                adapter: 0, devices: [FleetHTTPTests.device(FleetHTTPTests.shared, rssi: -75, battery: "0a")]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-a", "--mqtt-commands", "--api-key", FleetHTTPTests.key])
        let b = try await GatewayUnderTest.start(
            scenario: FleetHTTPTests.scenario(
                adapter: 1, devices: [FleetHTTPTests.device(Self.onlyB, rssi: -60, battery: "2b")]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-b", "--mqtt-commands", "--api-key", FleetHTTPTests.key])
        let scans = [try a.stream("/v1/scan", headers: Self.auth), try b.stream("/v1/scan", headers: Self.auth)]
        var aAlive = true
        func stopAll() async {
            for scan in scans { scan.close() }
            if aAlive { #expect(await a.stop() == 0, "\(a.process.standardError.suffix(2000))") }
            #expect(await b.stop() == 0, "\(b.process.standardError.suffix(2000))")
            await broker.stop()
        }
        let (heard, _) = await FleetHTTPTests.poll(timeout: .seconds(60)) {
            try await a.get("/v1/fleet/devices/\(Self.onlyB)", headers: Self.auth).object
        } until: { ($0["heard_by"] as? [[String: Any]])?.first?["gateway"] as? String == "g-b" }
        #expect(heard)

        // Not connected yet: g-b's problem is the route's answer, no stream.
        let early = try await a.get(Self.stream, headers: Self.auth)
        #expect((400...499).contains(early.status) && early.headers["gateway"] == "g-b", "\(early)")
        #expect(early.contentType == "application/problem+json", "\(early)")

        let connect = try await a.request(
            "POST", "/v1/fleet/devices/\(Self.onlyB)/connect?timeout_ms=20000", headers: Self.auth)
        #expect(connect.status == 200 && connect.headers["gateway"] == "g-b", "\(connect)")
        #expect(try await Self.notifying(b) == false)

        // A characteristic the device lacks: g-b's 404, before any stream.
        let missing = try await a.get(
            "/v1/fleet/devices/\(Self.onlyB)/characteristics/2a00/notifications", headers: Self.auth)
        #expect(missing.status == 404 && missing.headers["gateway"] == "g-b", "\(missing)")
        // A mistake in the request is g-a's own 400.
        let invalid = try await a.get(Self.stream + "?format=nope", headers: Self.auth)
        #expect(invalid.status == 400 && invalid.headers["gateway"] == nil, "\(invalid)")

        // Through g-a, g-b's values, with the local route's event and shape.
        let first = try a.stream(Self.stream, headers: Self.auth)
        #expect(await Self.waitNotifying(b, true, timeout: .seconds(30)), "\(a.process.standardError.suffix(2000))")
        #expect(try await Self.deliver(0x31, on: b, to: first, hex: "31"))
        let value = first.events.first { $0.type == "notification" }
        #expect(value?.json["address"] as? String == Self.onlyB, "\(value?.data ?? "")")
        #expect(value?.json["characteristic"] as? String == Self.battery, "\(value?.data ?? "")")
        #expect(value?.json["encoding"] as? String == "hex" && value?.json["timestamp"] is String)
        #expect(value?.id.flatMap(UInt64.init) != nil, "\(String(describing: value?.id))")

        // Two streams; the first leaves, the second goes on, g-b still notifying.
        let second = try a.stream(Self.stream + "?format=value&encoding=base64", headers: Self.auth)
        #expect(try await Self.deliver(0x32, on: b, to: second, hex: "Mg=="))
        first.close()
        #expect(try await Self.deliver(0x33, on: b, to: second, hex: "Mw=="))
        #expect(try await Self.notifying(b) == true)

        // A plain MQTT subscribe and unsubscribe on g-b (the one shared
        // subscription) leave the lease's alone.
        let replies = try await broker.mosquittoSub("blegateway/replies/plain", id: "plain", format: "%D %P %p")
        defer { replies.kill() }
        for (command, id) in [("subscribe", "p1"), ("unsubscribe", "p2")] {
            try await broker.mosquittoPub([
                "-t", "blegateway/g-b/cmd/\(command)", "-q", "1",
                "-m", #"{"address":"\#(Self.onlyB)","characteristic":"2a19"}"#,
                "-D", "publish", "response-topic", "blegateway/replies/plain", "-D", "publish", "correlation-data", id,
                "-D", "publish", "user-property", "api-key", FleetHTTPTests.key,
            ])
            #expect(await replies.waitForOutput(containing: "\(id) status:200", timeout: .seconds(30)), "\(replies.standardOutput)")
        }
        #expect(try await Self.deliver(0x34, on: b, to: second, hex: "NA=="))
        #expect(try await Self.notifying(b) == true)

        // The last client leaves: its lease is given back at once, well
        // before its 15 s time to live.
        let left = ContinuousClock.now
        second.close()
        #expect(await Self.waitNotifying(b, false, timeout: .seconds(10)))
        #expect(ContinuousClock.now - left < .seconds(10))

        // The device leaves g-b: the stream ends as a local one does.
        let third = try a.stream(Self.stream, headers: Self.auth)
        #expect(await Self.waitNotifying(b, true, timeout: .seconds(30)))
        let disconnect = try await b.request("POST", "/v1/devices/\(Self.onlyB)/disconnect", headers: Self.auth)
        #expect(disconnect.status == 200, "\(disconnect)")
        let ended = await third.waitFor(timeout: .seconds(20)) { $0.contains { $0.type == "subscription-ended" } }
        let end = ended.first { $0.type == "subscription-ended" }
        #expect(end?.json["reason"] as? String == "disconnected", "\(ended.map(\.data))")
        #expect(await third.hasEnded(within: .seconds(10)))

        // g-a dies with a stream open: g-b drops the lease once it expires
        // (renewed every 5 s, 15 s to live), not before.
        let reconnect = try await b.request("POST", "/v1/devices/\(Self.onlyB)/connect?timeout_ms=20000", headers: Self.auth)
        #expect(reconnect.status == 200, "\(reconnect)")
        let orphan = try a.stream(Self.stream, headers: Self.auth)
        #expect(await Self.waitNotifying(b, true, timeout: .seconds(30)))
        let killed = ContinuousClock.now
        await a.crash()
        aAlive = false
        orphan.close()
        #expect(await Self.waitNotifying(b, false, timeout: .seconds(45)))
        let dropped = ContinuousClock.now - killed
        #expect(dropped >= .seconds(5) && dropped < .seconds(40), "\(dropped)")
        await stopAll()
    }
}
