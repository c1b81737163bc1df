import BlueZSimulator
import Foundation
import Glibc
import TestSupport
import Testing

/// The gateway left running with nobody watching, as its user sees it: the
/// state directory carries the event log across a `kill -9`.
@Suite struct UnattendedTests {
    /// The newest event id committed to the store in `directory`, read
    /// beside the running gateway with the sqlite3 tool.
    func newestStoredID(_ directory: String) async throws -> UInt64? {
        let answer = try await run(["sqlite3", "-readonly", directory + "/blegateway.sqlite", "SELECT max(id) FROM events"])
        return UInt64(answer.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func afterAKill9EventIDsContinueAndAResumeGetsEverythingStored() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        try await gateway.discover(TestScenario.strap)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let relay = device + "/characteristics/\(TestScenario.relay)/value"
        let live = try gateway.stream("/v1/events?type=characteristic-value")
        var firstSeen: UInt64?
        for _ in 0..<100 where firstSeen == nil {
            _ = try await gateway.get(relay)
            firstSeen = await live.waitFor(timeout: .milliseconds(500)) { !$0.isEmpty }.first?.id.flatMap { UInt64($0) }
        }
        let first = try #require(firstSeen)
        for _ in 0..<30 { _ = try await gateway.get(relay) }
        let seen = await live.waitFor(timeout: .seconds(30)) { $0.count >= 31 }
        let seenIDs = seen.compactMap { $0.id.flatMap { UInt64($0) } }
        let lastSeen = try #require(seenIDs.last)
        // Acknowledged means committed: wait for the store to hold them.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, try await newestStoredID(directory) ?? 0 < lastSeen {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await newestStoredID(directory) ?? 0 >= lastSeen)
        live.close()
        await gateway.crash()

        let restarted = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(restarted.process.standardError.contains("next event id"), "\(restarted.process.standardError.suffix(2000))")
        let resumed = try restarted.stream(
            "/v1/events?type=characteristic-value", headers: ["Last-Event-ID": String(first - 1)])
        let replayed = await resumed.waitFor(timeout: .seconds(30)) { events in
            events.contains { $0.id.flatMap { UInt64($0) } == lastSeen }
        }
        let replayedIDs = replayed.compactMap { $0.id.flatMap { UInt64($0) } }
        #expect(replayedIDs == seenIDs, "the resume holds what the live client saw before the kill, in order")
        #expect(!replayed.contains { $0.type == "replay-gap" })
        // New events go on after every id handed out before the kill.
        try await restarted.discover(TestScenario.strap)
        #expect(try await restarted.request("POST", device + "/connect").status == 200)
        _ = try await restarted.get(relay)
        let next = await resumed.waitFor(timeout: .seconds(30)) { $0.count > replayed.count }
        let newID = try #require(next.last?.id.flatMap { UInt64($0) })
        #expect(newID > lastSeen)
        resumed.close()
        #expect(await restarted.stop() == 0)
    }

    @Test func aKeptDeviceIsReconnectedAfterGoingOutOfRangeAndStaysConnectedOverARestart() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        let events = try gateway.stream("/v1/events?device=\(TestScenario.strap)")
        let device = "/v1/devices/\(TestScenario.strap)"
        // Never scanned: keeping finds it.
        let kept = try await gateway.request("PUT", device + "/keep")
        #expect(kept.status == 201, "\(kept)")
        #expect(kept.object["status"] as? String != nil)
        #expect(try await gateway.request("PUT", device + "/keep").status == 200, "keeping twice is keeping")
        let connected = await events.waitFor(1, of: "kept-connected", timeout: .seconds(60))
        #expect(connected.count == 1, "\(events.events.suffix(10))")
        #expect(try await gateway.get(device).object["connected"] as? Bool == true)
        let list = try await gateway.get("/v1/kept-connections")
        #expect(list.array.first?["status"] as? String == "connected", "\(list)")

        // Out of range: the link drops; back in range: connected again.
        let strap = try #require(DeviceAddress(TestScenario.strap))
        try await gateway.simulator.setInRange(false, strap)
        let retrying = await events.waitFor(timeout: .seconds(60)) { events in
            events.contains { $0.type == "reconnecting" && $0.json["reason"] as? String != "kept" }
        }.filter { $0.type == "reconnecting" && $0.json["reason"] as? String != "kept" }
        #expect(retrying.first?.json["attempt"] as? Int == 1, "the first attempt after the loss")
        #expect(retrying.first?.json["delay_ms"] as? Int == 0)
        try await gateway.simulator.setInRange(true, strap)
        let again = await events.waitFor(2, of: "kept-connected", timeout: .seconds(90))
        #expect(again.count == 2, "\(events.events.suffix(10).map(\.type))")
        let types = events.events.map(\.type).filter { ["device-connected", "device-disconnected"].contains($0) }
        #expect(types.suffix(2) == ["device-disconnected", "device-connected"], "\(types)")

        // SIGTERM leaves a kept device connected.
        let monitor = try ChildProcess(["busctl", "--address=\(gateway.bus.address)", "monitor", "org.bluez"])
        try await Task.sleep(for: .milliseconds(300))
        await GatewayUnderTest.waitUntilHandlingSignals(gateway.process)
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.wait(timeout: .seconds(20)) == 0)
        let calls = monitor.standardOutput
        monitor.kill()
        #expect(!calls.contains("Member=Disconnect"), "a kept device is left connected")
        events.close()
        await gateway.stop()

        // The next start keeps it again.
        let restarted = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(restarted.process.standardError.contains("keeping 1 device(s) connected"), "\(restarted.process.standardError.suffix(1500))")
        let listAgain = try await restarted.get("/v1/kept-connections")
        #expect(listAgain.array.first?["address"] as? String == TestScenario.strap)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, try await restarted.get(device).object["connected"] as? Bool != true {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await restarted.get(device).object["connected"] as? Bool == true)
        // Only an explicit delete ends keeping.
        #expect(try await restarted.request("DELETE", device + "/keep").status == 204)
        #expect(try await restarted.request("DELETE", device + "/keep").status == 404)
        #expect(try await restarted.get("/v1/kept-connections").array.isEmpty)
        await restarted.stop()
    }

    @Test func aKeptDeviceIsGivenUpOnlyWhenToldTo() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/events?type=reconnecting,given-up")
        let kept = try await gateway.request("PUT", "/v1/devices/12:34:56:78:9A:BC/keep", json: #"{"max_attempts":1}"#)
        #expect(kept.status == 201, "\(kept)")
        let givenUp = await events.waitFor(1, of: "given-up", timeout: .seconds(90))
        #expect(givenUp.first?.json["attempts"] as? Int == 1, "\(events.events)")
        #expect(try await gateway.get("/v1/devices/12:34:56:78:9A:BC/keep").object["status"] as? String == "given-up")
        let bad = try await gateway.request("PUT", "/v1/devices/12:34:56:78:9A:BC/keep", json: #"{"max_attempts":0}"#)
        #expect(bad.status == 400)
        events.close()
        await gateway.stop()
    }

    @Test func aStandingSubscriptionIsTakenAgainAfterEveryReconnectAndRestoredAfterAKill9() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        let device = "/v1/devices/\(TestScenario.strap)"
        // Nobody streams the notifications: they reach /v1/events anyway.
        let events = try gateway.stream("/v1/events?device=\(TestScenario.strap)")
        #expect(try await gateway.request("PUT", device + "/keep").status == 201)
        let created = try await gateway.request(
            "POST", "/v1/subscriptions", json: #"{"device":"\#(TestScenario.strap)","characteristic":"2a37","mode":"notify"}"#)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? Int)
        #expect(try await gateway.get("/v1/subscriptions").array.count == 1)
        func values(_ after: [ReceivedEvent]) -> Int {
            after.filter { $0.type == "characteristic-value" && ($0.json["characteristic"] as? String)?.hasPrefix("00002a37") == true }.count
        }
        #expect(values(await events.waitFor(timeout: .seconds(60)) { values($0) >= 3 }) >= 3, "\(events.events.suffix(5))")

        // Out of range and back: reconnected, resubscribed, values again.
        let strap = try #require(DeviceAddress(TestScenario.strap))
        #expect(await events.waitFor(1, of: "kept-connected", timeout: .seconds(60)).count == 1)
        try await gateway.simulator.setInRange(false, strap)
        let lost = await events.waitFor(timeout: .seconds(60)) { events in
            events.contains { $0.type == "reconnecting" && $0.json["reason"] as? String != "kept" }
        }
        #expect(lost.contains { $0.type == "reconnecting" && $0.json["reason"] as? String != "kept" })
        try await gateway.simulator.setInRange(true, strap)
        #expect(await events.waitFor(2, of: "kept-connected", timeout: .seconds(90)).count == 2)
        let reconnectedAt = events.events.count
        let after = await events.waitFor(timeout: .seconds(60)) { values(Array($0.dropFirst(reconnectedAt))) >= 3 }
        #expect(values(Array(after.dropFirst(reconnectedAt))) >= 3, "values flow again: \(after.suffix(5).map(\.type))")
        let lastID = try #require(after.last?.id)
        events.close()
        // What the client saw is committed before the kill (ids handed out
        // in the last batch window may be given again after a kill -9).
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, try await newestStoredID(directory) ?? 0 < UInt64(lastID) ?? 0 {
            try await Task.sleep(for: .milliseconds(20))
        }

        // kill -9, then the same state directory: kept and subscribed again,
        // and the ids go on.
        await gateway.crash()
        let restarted = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(
            restarted.process.standardError.contains("holding 1 standing subscription(s)"),
            "\(restarted.process.standardError.suffix(1500))")
        let again = try restarted.stream("/v1/events?device=\(TestScenario.strap)&type=characteristic-value")
        let flowing = await again.waitFor(timeout: .seconds(90)) { values($0) >= 3 }
        #expect(values(flowing) >= 3)
        #expect(flowing.compactMap { $0.id.flatMap { UInt64($0) } }.allSatisfy { $0 > UInt64(lastID) ?? 0 })
        #expect(try await restarted.get("/v1/subscriptions/\(id)").object["status"] as? String == "active")
        #expect(try await restarted.request("DELETE", "/v1/subscriptions/\(id)").status == 204)
        #expect(try await restarted.request("DELETE", "/v1/subscriptions/\(id)").status == 404)
        again.close()
        await restarted.stop()
    }
}
