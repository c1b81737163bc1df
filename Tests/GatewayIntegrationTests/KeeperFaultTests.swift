import Foundation
import Glibc
import TestSupport
import Testing

/// A kept device with a standing subscription on its Heart Rate
/// Measurement, through the faults an unattended gateway meets: bluetoothd
/// restarting, the bus lost and back, the adapter powered off and on. The
/// gateway and the simulator run as separate processes (`FaultRig`); the
/// faults come through the simulator's control interface or by killing
/// the bus, and the user sees it all on `/v1/events`: each time the device
/// is reconnected and the subscription's values flow again, with nobody
/// asking.
@Suite(.serialized) struct KeeperFaultTests {
    static let strap = TestScenario.strap
    static let device = "/v1/devices/\(TestScenario.strap)"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"

    static func isHeartRateValue(_ event: ReceivedEvent) -> Bool {
        event.type == "characteristic-value" && event.json["characteristic"] as? String == heartRate
    }

    /// Heart Rate values after the `round`th kept-connected event.
    static func values(after round: Int, in events: [ReceivedEvent]) -> Int {
        var connected = 0
        var values = 0
        for event in events {
            if event.type == "kept-connected" { connected += 1 } else if connected >= round, isHeartRateValue(event) { values += 1 }
        }
        return values
    }

    /// Keeps the strap (never scanned: keeping finds it) and subscribes to
    /// its Heart Rate Measurement; returns the device's events (from the
    /// first, so that none is missed) once values flow.
    func keepAndSubscribe(_ rig: FaultRig) async throws -> EventStreamClient {
        let events = try rig.stream("/v1/events?device=\(Self.strap)&last_event_id=0")
        let kept = try await rig.request("PUT", Self.device + "/keep")
        #expect(kept.status == 201, "\(kept)")
        let subscribed = try await rig.request(
            "POST", "/v1/subscriptions", json: #"{"device":"\#(Self.strap)","characteristic":"2a37","mode":"notify"}"#)
        #expect(subscribed.status == 201, "\(subscribed)")
        let flowing = await events.waitFor(timeout: .seconds(60)) { Self.values(after: 1, in: $0) >= 3 }
        #expect(Self.values(after: 1, in: flowing) >= 3, "\(flowing.suffix(8).map(\.type))\n\(rig.gateway.standardError.suffix(2000))")
        return events
    }

    /// After a fault: a `reconnecting` event because of it (one of
    /// `reasons`), the `round`th kept-connected, Heart Rate values after it,
    /// the kept connection listed as connected and the subscription as
    /// active; every event as openapi.yaml declares it.
    func expectBack(
        _ rig: FaultRig, _ events: EventStreamClient, round: Int, because reasons: Set<String>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let connected = await events.waitFor(round, of: "kept-connected", timeout: .seconds(120))
        #expect(
            connected.count == round, "\(events.events.suffix(10).map { "\($0.type) \($0.data)" })\n\(rig.gateway.standardError.suffix(3000))",
            sourceLocation: sourceLocation)
        // The first attempt after the fault is attempt 1: nothing was tried
        // (and failed) while BlueZ or the adapter was away.
        var seenConnected = 0
        let afterFault = events.events.filter { event in
            if event.type == "kept-connected" { seenConnected += 1 }
            return event.type == "reconnecting" && seenConnected == round - 1
        }
        let first = afterFault.first?.json ?? [:]
        #expect(first["attempt"] as? Int == 1, "\(afterFault.map(\.data))", sourceLocation: sourceLocation)
        #expect(reasons.contains(first["reason"] as? String ?? ""), "\(afterFault.map(\.data))", sourceLocation: sourceLocation)
        let flowing = await events.waitFor(timeout: .seconds(60)) { Self.values(after: round, in: $0) >= 3 }
        #expect(
            Self.values(after: round, in: flowing) >= 3, "values flow again: \(flowing.suffix(10).map(\.type))",
            sourceLocation: sourceLocation)
        let kept = try await rig.waitFor(Self.device + "/keep") { $0.object["status"] as? String == "connected" }
        #expect(kept.object["status"] as? String == "connected", "\(kept)", sourceLocation: sourceLocation)
        #expect(kept.object["failed_attempts"] as? Int == 0, "\(kept)", sourceLocation: sourceLocation)
        let subscriptions = try await rig.get("/v1/subscriptions")
        #expect(subscriptions.array.map { $0["status"] as? String } == ["active"], "\(subscriptions)", sourceLocation: sourceLocation)
        let problems = try await SpecValidator.problems(events.events.map { ("GatewayEvent", $0.data) })
        #expect(problems.isEmpty, "\(problems.prefix(5).joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    /// Waits until the kept connection says it waits, because of `reason`.
    func expectWaiting(_ rig: FaultRig, because reason: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let kept = try await rig.waitFor(Self.device + "/keep", timeout: .seconds(60)) { $0.object["last_reason"] as? String == reason }
        #expect(kept.object["status"] as? String == "connecting", "\(kept)", sourceLocation: sourceLocation)
        #expect(kept.object["last_reason"] as? String == reason, "\(kept)", sourceLocation: sourceLocation)
        #expect(kept.object["failed_attempts"] as? Int == 0, "nothing tried meanwhile: \(kept)", sourceLocation: sourceLocation)
    }

    @Test(.timeLimit(.minutes(5))) func bluetoothdRestartingAndStoppedForAWhile() async throws {
        let rig = try await FaultRig.start()
        let events = try await keepAndSubscribe(rig)

        try await rig.control("RestartBluetoothd")
        try await expectBack(rig, events, round: 2, because: ["bluetoothd-unavailable", "disconnected"])

        // Gone for a while: the keeper waits for it, trying nothing, and
        // comes back with it.
        try await rig.control("StopBluetoothd")
        try await expectWaiting(rig, because: "bluetoothd-unavailable")
        try await rig.control("StartBluetoothd")
        try await expectBack(rig, events, round: 3, because: ["bluetoothd-unavailable"])
        events.close()
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(5))) func theBusLostAndBack() async throws {
        let rig = try await FaultRig.start()
        let events = try await keepAndSubscribe(rig)

        rig.bus.kill()
        // bluetoothd goes with its bus.
        #expect(await rig.simulator?.wait(timeout: .seconds(20)) == 1)
        try await expectWaiting(rig, because: "bus-unavailable")
        try await rig.bus.start()
        try await expectWaiting(rig, because: "bluetoothd-unavailable")
        try await rig.startSimulator()
        try await expectBack(rig, events, round: 2, because: ["bus-unavailable", "bluetoothd-unavailable"])
        events.close()
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(5))) func theAdapterPoweredOffAndOn() async throws {
        let rig = try await FaultRig.start()
        let events = try await keepAndSubscribe(rig)

        try await rig.control("SetPowered", "sb", "hci0", "false")
        try await expectWaiting(rig, because: "adapter-powered-off")
        try await rig.control("SetPowered", "sb", "hci0", "true")
        try await expectBack(rig, events, round: 2, because: ["adapter-powered-off", "disconnected"])
        events.close()
        #expect(await rig.stop() == 0)
    }
}
