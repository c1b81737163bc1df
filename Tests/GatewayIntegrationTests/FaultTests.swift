import Foundation
import Glibc
import TestSupport
import Testing

/// Faults injected under open streams, with the gateway and the simulator
/// as separate processes on a bus that is killed and restarted: what a user
/// sees during the outage and after it.
@Suite(.serialized) struct FaultTests {
    static let strap = TestScenario.strap
    static let heartRate = "/v1/devices/\(TestScenario.strap)/characteristics/2a37"

    func expectProblem(
        _ answer: HTTPAnswer, _ status: Int, _ kind: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.status == status, "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.contentType == "application/problem+json", "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.object["type"] as? String == "urn:blegateway:problem:\(kind)", "\(answer)", sourceLocation: sourceLocation)
    }

    /// Connects the heart-rate strap and opens a notification stream on it;
    /// returns once values flow.
    func subscribe(_ rig: FaultRig) async throws -> EventStreamClient {
        let connect = try await rig.request("POST", "/v1/devices/\(Self.strap)/connect")
        #expect(connect.status == 200, "\(connect)")
        let stream = try rig.stream(Self.heartRate + "/notifications")
        let values = await stream.waitFor(3, of: "notification")
        #expect(values.count >= 3, "no notifications: \(stream.process.standardError)")
        return stream
    }

    /// What a user sees while BlueZ is unreachable: /health 503 with the
    /// state, 503 bluetoothd-unavailable problems on device and GATT routes.
    func expectOutage(_ rig: FaultRig, state: String) async throws {
        let health = try await rig.waitFor("/health") { $0.object["state"] as? String == state }
        let problems = try await SpecValidator.problems([
            ("Health", health.text), ("Problem", try await rig.get("/v1/devices/\(Self.strap)").text),
        ])
        #expect(problems.isEmpty, "\(problems)")
        #expect(health.status == 503, "\(health)")
        #expect(health.object["status"] as? String == "unavailable", "\(health)")
        #expect(health.object["bluez"] as? String == "unavailable", "\(health)")
        #expect((health.object["detail"] as? String)?.isEmpty == false, "\(health)")
        expectProblem(try await rig.get("/v1/devices/\(Self.strap)"), 503, "bluetoothd-unavailable")
        expectProblem(try await rig.get(Self.heartRate), 503, "bluetoothd-unavailable")
        expectProblem(
            try await rig.get("/v1/devices/\(Self.strap)/characteristics/2a38/value"), 503, "bluetoothd-unavailable")
        expectProblem(try await rig.request("POST", "/v1/devices/\(Self.strap)/connect"), 503, "bluetoothd-unavailable")
        let adapters = try await rig.get("/v1/adapters")
        expectProblem(adapters, 503, "bluetoothd-unavailable")
        #expect(adapters.headers["retry-after"] == "5", "\(adapters.headers)")
    }

    /// After the outage: healthy again, the old notification stream ended
    /// with its reason (the restart dropped the link), and after connecting
    /// again values flow on a new stream; nothing left subscribed once the
    /// streams close, and the descriptors back to where they were.
    func expectRecovery(
        _ rig: FaultRig, notifications: EventStreamClient, events: EventStreamClient, scan: EventStreamClient,
        descriptorsBefore: Int, listBefore: String
    ) async throws {
        let health = try await rig.waitFor("/health") { $0.status == 200 }
        #expect(health.object["status"] as? String == "ok", "\(health)")

        let ended = await notifications.waitFor(1, of: "subscription-ended")
        #expect(ended.first?.json["reason"] as? String == "bluez-restarted", "\(ended)")
        #expect(await notifications.hasEnded(within: .seconds(10)))
        let scanResumed = await scan.waitFor(1, of: "scan-resumed")
        #expect(scanResumed.count == 1, "\(scan.events.map(\.type))")
        let available = await events.waitFor { events in
            events.contains { $0.type == "bluez-state" && $0.json["state"] as? String == "available" }
        }
        #expect(available.contains { $0.type == "bluez-state" && $0.json["state"] as? String == "available" })

        // What the streams said is what openapi.yaml declares.
        var documents: [(schema: String, json: String)] = [("Health", health.text)]
        documents += notifications.events.filter { $0.type != "notification" }.map { ("SubscriptionEnded", $0.data) }
        documents += events.events.map { ("GatewayEvent", $0.data) }
        documents += scan.events.filter { $0.type == "scan-interrupted" }.map { ("ScanStopped", $0.data) }
        let problems = try await SpecValidator.problems(documents)
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")

        // The gateway's event ids only ever grow, outage included: a client
        // resuming with Last-Event-ID misses nothing.
        let ids = events.events.compactMap { $0.id.flatMap(UInt64.init) }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(ids)")

        try await rig.discover(Self.strap)
        let again = try await subscribe(rig)
        again.close()
        scan.close()
        events.close()
        let quiet = try await rig.waitFor(Self.heartRate) { $0.object["notifying"] as? Bool == false }
        #expect(quiet.object["notifying"] as? Bool == false, "the subscription outlived its last stream: \(quiet)")
        let deadline = ContinuousClock.now + .seconds(20)
        while rig.gatewayDescriptors > descriptorsBefore, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(rig.gatewayDescriptors <= descriptorsBefore, "descriptors leaked: \(rig.gatewayDescriptorList)\nbefore: \(listBefore)")
    }

    @Test(.timeLimit(.minutes(3))) func simulatorKilledAndRestarted() async throws {
        let rig = try await FaultRig.start()
        let descriptorsBefore = rig.gatewayDescriptors
        let listBefore = rig.gatewayDescriptorList
        try await rig.discover(Self.strap)
        let notifications = try await subscribe(rig)
        let events = try rig.stream("/v1/events?type=bluez-state,adapter-state")
        let scan = try rig.stream("/v1/scan")
        _ = await scan.waitFor(1, of: "discovered")
        #expect(try await rig.get("/health").status == 200)

        rig.killSimulator()
        let interrupted = await notifications.waitFor(1, of: "subscription-interrupted")
        #expect(interrupted.first?.json["reason"] as? String == "bluez-unavailable", "\(notifications.events)")
        #expect(await scan.waitFor(1, of: "scan-interrupted").count == 1)
        try await expectOutage(rig, state: "bluetoothd-unavailable")
        let gone = await events.waitFor { $0.contains { $0.json["state"] as? String == "bluetoothd-unavailable" } }
        #expect(gone.contains { $0.type == "bluez-state" }, "\(gone)")

        try await rig.startSimulator()
        try await expectRecovery(
            rig, notifications: notifications, events: events, scan: scan, descriptorsBefore: descriptorsBefore,
            listBefore: listBefore)
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func busKilledAndRestarted() async throws {
        let rig = try await FaultRig.start()
        let descriptorsBefore = rig.gatewayDescriptors
        let listBefore = rig.gatewayDescriptorList
        try await rig.discover(Self.strap)
        let notifications = try await subscribe(rig)
        let events = try rig.stream("/v1/events?type=bluez-state")
        let scan = try rig.stream("/v1/scan")
        _ = await scan.waitFor(1, of: "discovered")
        let before = try rig.stream("/v1/events?type=device-connected&last_event_id=0")
        let lastSeen = await before.waitFor(1, of: "device-connected").last?.id
        before.close()
        #expect(lastSeen != nil)

        rig.bus.kill()
        // bluetoothd goes with its bus; so does the simulator.
        #expect(await rig.simulator?.wait(timeout: .seconds(20)) == 1)
        let interrupted = await notifications.waitFor(1, of: "subscription-interrupted")
        #expect(interrupted.first?.json["reason"] as? String == "bluez-unavailable", "\(notifications.events)")
        try await expectOutage(rig, state: "bus-unavailable")
        let lost = await events.waitFor { $0.contains { $0.json["state"] as? String == "bus-unavailable" } }
        #expect(lost.contains { $0.type == "bluez-state" }, "\(lost)")
        #expect(rig.gateway.standardError.contains("the D-Bus connection is lost"))

        // A few attempts fail while the bus is down; none may leave
        // anything behind (the descriptor count after recovery says so).
        let deadline = ContinuousClock.now + .seconds(30)
        while !rig.gateway.standardError.contains("attempt 3 failed"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(rig.gateway.standardError.contains("attempt 3 failed"))
        try await rig.bus.start()
        // On the bus again, without bluetoothd yet.
        try await expectOutage(rig, state: "bluetoothd-unavailable")
        #expect(rig.gateway.standardError.contains("reconnected to the bus"))
        try await rig.startSimulator()
        try await expectRecovery(
            rig, notifications: notifications, events: events, scan: scan, descriptorsBefore: descriptorsBefore,
            listBefore: listBefore)
        let states = events.events.filter { $0.type == "bluez-state" }.compactMap { $0.json["state"] as? String }
        #expect(states == ["bus-unavailable", "bluetoothd-unavailable", "available"], "\(states)")
        // A client that left before the outage and resumes from the last
        // event it saw misses nothing the gateway said meanwhile.
        let resumed = try rig.stream("/v1/events?type=bluez-state&last_event_id=\(lastSeen ?? "0")")
        let replayed = await resumed.waitFor(3, of: "bluez-state").compactMap { $0.json["state"] as? String }
        #expect(replayed == ["bus-unavailable", "bluetoothd-unavailable", "available"], "\(replayed)")
        resumed.close()
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func simulatedBluetoothdStoppedAndStartedThroughTheControlInterface() async throws {
        let rig = try await FaultRig.start()
        try await rig.discover(Self.strap)
        let notifications = try await subscribe(rig)
        try await rig.control("StopBluetoothd")
        #expect(try await rig.control("IsBluetoothdRunning").contains("false"))
        #expect(await notifications.waitFor(1, of: "subscription-interrupted").count == 1)
        try await expectOutage(rig, state: "bluetoothd-unavailable")
        try await rig.control("StartBluetoothd")
        _ = try await rig.waitFor("/health") { $0.status == 200 }
        let ended = await notifications.waitFor(1, of: "subscription-ended")
        #expect(ended.first?.json["reason"] as? String == "bluez-restarted", "\(ended)")
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func outOfRangeAndDroppedLinksThroughTheControlInterface() async throws {
        let rig = try await FaultRig.start()
        try await rig.discover(Self.strap)
        let first = try await subscribe(rig)
        try await rig.control("DropConnection", "s", Self.strap)
        let dropped = await first.waitFor(1, of: "subscription-ended")
        #expect(dropped.first?.json["reason"] as? String == "disconnected", "\(dropped)")

        let second = try await subscribe(rig)
        try await rig.control("SetInRange", "sb", Self.strap, "false")
        let gone = await second.waitFor(1, of: "subscription-ended")
        #expect(gone.first?.json["reason"] as? String == "disconnected", "\(gone)")
        let refused = try await rig.request("POST", "/v1/devices/\(Self.strap)/connect?timeout_ms=1000")
        #expect([502, 504].contains(refused.status), "\(refused)")

        try await rig.control("SetInRange", "sb", Self.strap, "true")
        try await rig.discover(Self.strap)
        let third = try await subscribe(rig)
        third.close()
        #expect(await rig.stop() == 0)
    }

    @Test func healthWithoutTheAdapterItServesIs503() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--adapter", "hci9"])
        let health = try await gateway.get("/health")
        #expect(health.status == 503, "\(health)")
        #expect(health.object["state"] as? String == "no-adapter", "\(health)")
        #expect((health.object["detail"] as? String)?.contains("hci9") == true, "\(health)")
        #expect(await gateway.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func healthSaysWhichStateAndWhetherTheUserCanFixIt() async throws {
        let rig = try await FaultRig.start()
        let ok = try await rig.get("/health")
        #expect(ok.status == 200 && ok.object["state"] as? String == "ok", "\(ok)")
        try await rig.control("SetPowered", "sb", "hci0", "false")
        let off = try await rig.waitFor("/health") { $0.object["state"] as? String == "adapter-off" }
        #expect(off.status == 200, "powered off is fixable through the API: \(off)")
        #expect(off.object["status"] as? String == "degraded", "\(off)")
        let degraded = try await run([GatewayUnderTest.executable, "health", "--url", rig.baseURL + "/health"])
        #expect(degraded.status == 0 && degraded.output.hasPrefix("adapter-off: "), "\(degraded)")
        let on = try await rig.request("PATCH", "/v1/adapters/hci0", json: #"{"powered":true}"#)
        #expect(on.status == 200, "\(on)")
        #expect(try await rig.get("/health").object["state"] as? String == "ok")
        let health = try await run([GatewayUnderTest.executable, "health", "--url", rig.baseURL + "/health"])
        #expect(health.status == 0, "\(health)")
        rig.killSimulator()
        _ = try await rig.waitFor("/health") { $0.status == 503 }
        let unhealthy = try await run([GatewayUnderTest.executable, "health", "--url", rig.baseURL + "/health"])
        #expect(unhealthy.status == 1, "\(unhealthy)")
        #expect(unhealthy.output.hasPrefix("unhealthy: HTTP 503 bluetoothd-unavailable: "), "\(unhealthy)")
        #expect(await rig.stop() == 0)
    }
}
