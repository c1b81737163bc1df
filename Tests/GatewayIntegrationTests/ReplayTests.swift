import Foundation
import TestSupport
import Testing

/// `GET /v1/events?last_event_id=0` as the README gives it, with a backlog
/// far larger than a stream's buffer: a client catching up is not too slow.
@Suite struct ReplayTests {
    @Test func aBacklogLargerThanTheStreamBufferIsReplayedWhole() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--replay-buffer", "100000"])
        try await gateway.discover(TestScenario.strap)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        // A 200-byte value: every read of it is a characteristic-value event
        // of about 700 bytes.
        let relay = device + "/characteristics/\(TestScenario.relay)/value"
        let value = String(repeating: "a5", count: 200)
        #expect(try await gateway.request("PUT", relay, json: #"{"value":"\#(value)"}"#).status == 204)

        // A live client sees every event from its first one on.
        let live = try gateway.stream("/v1/events?type=characteristic-value")
        var first: UInt64?
        for _ in 0..<100 where first == nil {
            _ = try await gateway.get(relay)
            first = await live.waitFor(timeout: .milliseconds(500)) { !$0.isEmpty }.first?.id.flatMap { UInt64($0) }
        }
        let firstSeen = try #require(first)
        // 1,000 reads more on one connection: about 700 KB of events, well
        // over the 256 KiB a stream may hold unread.
        let reads = try await run(
            ["curl", "-sS", "-o", "/dev/null"] + Array(repeating: gateway.baseURL + relay, count: 1000),
            timeout: .seconds(120))
        #expect(reads.status == 0, "\(reads.error)")
        let seen = await live.waitFor(timeout: .seconds(60)) { $0.count >= 1001 }
        #expect(seen.count >= 1001)
        let seenIDs = seen.compactMap { $0.id.flatMap { UInt64($0) } }
        let lastSeen = try #require(seenIDs.last)

        let resumed = try gateway.stream("/v1/events?type=characteristic-value&last_event_id=0")
        let replayed = await resumed.waitFor(timeout: .seconds(60)) { events in
            events.contains { $0.id.flatMap { UInt64($0) } == lastSeen }
        }
        #expect(!resumed.process.standardOutput.contains("dropped"), "a client catching up is not a slow client")
        let replayedIDs = replayed.compactMap { $0.id.flatMap { UInt64($0) } }.filter { $0 >= firstSeen && $0 <= lastSeen }
        #expect(replayedIDs.count == seenIDs.count)
        let same = replayedIDs == seenIDs
        #expect(same, "the replay holds what the live client saw, in the same order")
        live.close()
        resumed.close()
        await gateway.stop()
    }
}
