import Foundation
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
}
