import Foundation
import Glibc
import TestSupport
import Testing

/// The SSE streams: long-lived work lives exactly as long as its stream.
@Suite struct StreamTests {
    /// Polls the adapter until `discovering` is `expected`.
    func discovering(_ gateway: GatewayUnderTest, becomes expected: Bool) async throws -> Bool {
        for _ in 0..<200 {
            if try await gateway.get("/v1/adapters/hci0").object["discovering"] as? Bool == expected { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test func aScanStreamScansWhileItsClientIsThere() async throws {
        let gateway = try await GatewayUnderTest.start()
        #expect(try await discovering(gateway, becomes: false))
        let stream = try gateway.stream("/v1/scan?service=180d&duration=false")
        let found = await stream.waitFor(1, of: "discovered")
        #expect(found.first?.json["device"].flatMap { ($0 as? [String: Any])?["address"] as? String } == TestScenario.strap)
        #expect(stream.events.allSatisfy { ($0.json["device"] as? [String: Any])?["address"] as? String == TestScenario.strap })
        #expect(try await discovering(gateway, becomes: true))

        // A second scanner with another filter shares the adapter's scan;
        // the wait covers both things asserted below: all three devices, and
        // an advertisement heard again.
        let everything = try gateway.stream("/v1/scan?duplicates=true")
        let seen = await everything.waitFor { events in
            Set(events.compactMap { ($0.json["device"] as? [String: Any])?["address"] as? String }).count == 3
                && events.contains { $0.type == "updated" }
        }
        #expect(Set(seen.compactMap { ($0.json["device"] as? [String: Any])?["address"] as? String }).count == 3)
        #expect(seen.contains { $0.type == "updated" }, "duplicates=true reports every advertisement")

        stream.close()
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await gateway.get("/v1/adapters/hci0").object["discovering"] as? Bool == true, "the other scan goes on")
        everything.close()
        // The last client left: the gateway stopped the discovery it started.
        #expect(try await discovering(gateway, becomes: false))
        let ids = seen.compactMap { $0.id.flatMap(UInt64.init) }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids increase")
        await gateway.stop()
    }

    @Test func aQuietScanStopsAsSoonAsItsClientLeaves() async throws {
        // Heartbeats far apart, and a filter nothing matches: the stream
        // never writes, so only the closed connection can end the scan.
        let gateway = try await GatewayUnderTest.start(arguments: ["--heartbeat-interval", "300"])
        let stream = try gateway.stream("/v1/scan?name_prefix=nothing-here")
        #expect(try await discovering(gateway, becomes: true))
        stream.close()
        #expect(try await discovering(gateway, becomes: false))
        #expect(stream.events.isEmpty)
        await gateway.stop()
    }

    @Test func notificationStreamsShareOneSubscription() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        // An independent observer of what the gateway asks of bluetoothd.
        let monitor = try ChildProcess(["busctl", "--address=\(gateway.bus.address)", "monitor", "org.bluez"])
        try await Task.sleep(for: .milliseconds(300))

        let first = try gateway.stream(device + "/characteristics/2a37/notifications")
        let second = try gateway.stream(device + "/characteristics/2a37/notifications?encoding=base64")
        let valuesAlone = try gateway.stream(device + "/characteristics/2a37/notifications?format=value&buffer_kib=4096")
        let firstEvents = await first.waitFor(5, of: "notification")
        let secondEvents = await second.waitFor(5, of: "notification")
        let aloneEvents = await valuesAlone.waitFor(5, of: "notification")
        valuesAlone.close()
        // ?format=value: each value alone, a JSON string, with the same ids.
        #expect(aloneEvents.count >= 5 && aloneEvents.allSatisfy { $0.dataLines.first?.hasPrefix("\"06") == true }, "\(aloneEvents.prefix(2))")
        #expect(!Set(aloneEvents.compactMap(\.id)).isDisjoint(with: firstEvents.compactMap(\.id)))
        #expect(firstEvents.count >= 5 && secondEvents.count >= 5)
        let value = firstEvents.first?.json
        #expect(value?["address"] as? String == TestScenario.strap)
        #expect(value?["characteristic"] as? String == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(value?["encoding"] as? String == "hex")
        #expect((value?["value"] as? String)?.hasPrefix("06") == true, "Heart Rate Measurement flags 06")
        #expect(secondEvents.first?.json["encoding"] as? String == "base64")
        // One value, one id, for every client.
        let shared = Set(firstEvents.compactMap(\.id)).intersection(secondEvents.compactMap(\.id))
        #expect(shared.count >= 3)
        #expect(try await gateway.get(device + "/characteristics/2a37").object["notifying"] as? Bool == true)

        first.close()
        try await Task.sleep(for: .milliseconds(300))
        let more = await second.waitFor(secondEvents.count + 3, of: "notification")
        #expect(more.count >= secondEvents.count + 3, "the other client still receives")
        second.close()
        var notifying = true
        for _ in 0..<100 where notifying {
            try await Task.sleep(for: .milliseconds(30))
            notifying = try await gateway.get(device + "/characteristics/2a37").object["notifying"] as? Bool ?? true
        }
        #expect(!notifying, "the last client left: StopNotify")
        let calls = monitor.standardOutput
        monitor.kill()
        // The Heart Rate Measurement notifies, so the fd path serves it: one
        // AcquireNotify, and closing its socket is the StopNotify.
        #expect(calls.components(separatedBy: "Member=AcquireNotify").count - 1 == 1, "one AcquireNotify for both clients")
        #expect(calls.components(separatedBy: "Member=StartNotify").count - 1 == 0)
        #expect(
            calls.components(separatedBy: "\"NotifyAcquired\"").count - 1 >= 2,
            "NotifyAcquired turned true, then false when the socket closed after both")
        await gateway.stop()
    }

    /// `duration_ms` ends each kind of stream by itself, with its last event,
    /// and with it the scan or the subscription it held.
    @Test func aStreamWithADurationEndsByItself() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)

        let scan = try gateway.stream("/v1/scan?duration_ms=700")
        // Long enough that a notification arrives within it on a loaded
        // machine: the stream is about its end, not its first value.
        let notifications = try gateway.stream(device + "/characteristics/2a37/notifications?duration_ms=3000")
        let events = try gateway.stream("/v1/events?duration_ms=700")
        for stream in [scan, notifications, events] {
            #expect(await stream.hasEnded(within: .seconds(20)), "the stream ended by itself")
        }
        #expect(scan.events.last?.type == "scan-stopped", "\(scan.events.suffix(2))")
        #expect(notifications.events.last?.type == "subscription-ended")
        #expect(notifications.events.last?.json["reason"] as? String == "duration-elapsed")
        #expect(notifications.events.contains { $0.type == "notification" })
        #expect(try await discovering(gateway, becomes: false), "the scan ended with its stream")
        var notifying = true
        for _ in 0..<100 where notifying {
            try await Task.sleep(for: .milliseconds(30))
            notifying = try await gateway.get(device + "/characteristics/2a37").object["notifying"] as? Bool ?? true
        }
        #expect(!notifying, "the subscription ended with its stream")
        let refused = try await gateway.get("/v1/scan?duration_ms=0")
        #expect(refused.status == 400, "\(refused)")
        await gateway.stop()
    }

    @Test func aDisconnectEndsTheNotificationStream() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let stream = try gateway.stream(device + "/characteristics/2a37/notifications")
        _ = await stream.waitFor(2, of: "notification")
        try await gateway.simulator.dropConnection(.init(TestScenario.strap).unsafelyUnwrapped)
        let ended = await stream.waitFor(1, of: "subscription-ended")
        #expect(ended.first?.json["reason"] as? String == "disconnected", "\(stream.events.last.map { $0.data } ?? "")")
        #expect(await stream.hasEnded(within: .seconds(10)), "the stream closes after subscription-ended")
        // A new stream on a disconnected device is a clear 409.
        let again = try await gateway.get(device + "/characteristics/2a37/notifications")
        #expect(again.status == 409, "\(again)")
        await gateway.stop()
    }

    @Test func theEventStreamReplaysWhatAClientMissed() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/events")
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let connected = await events.waitFor { $0.contains { $0.type == "services-resolved" } }
        #expect(connected.contains { $0.type == "device-discovered" })
        #expect(connected.contains { $0.type == "adapter-updated" })
        let resolved = connected.first { $0.type == "services-resolved" }
        #expect(resolved?.json["address"] as? String == TestScenario.strap)
        events.close()

        let discovered = try #require(connected.first { $0.type == "device-discovered" }?.id)
        // Resume after the first discovery, filtered by type and device.
        let resumed = try gateway.stream(
            "/v1/events?type=services-resolved,device-connected&device=\(TestScenario.strap.lowercased())",
            headers: ["Last-Event-ID": discovered])
        let replayed = await resumed.waitFor { $0.contains { $0.type == "services-resolved" } }
        #expect(replayed.contains { $0.id == resolved?.id })
        #expect(replayed.allSatisfy { ["services-resolved", "device-connected"].contains($0.type) })
        #expect(replayed.allSatisfy { UInt64($0.id ?? "0") ?? 0 > UInt64(discovered) ?? 0 })

        // Live events follow the replay on the same stream.
        #expect(try await gateway.request("POST", device + "/disconnect").status == 200)
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let live = await resumed.waitFor { $0.filter { $0.type == "services-resolved" }.count >= 2 }
        #expect(live.filter { $0.type == "services-resolved" }.count >= 2)

        // From the query too (EventSource cannot set headers), with a gap
        // reported when the buffer no longer holds the start.
        let fromQuery = try gateway.stream("/v1/events?type=services-resolved&last_event_id=0")
        #expect(await fromQuery.waitFor(2, of: "services-resolved").count >= 2)
        resumed.close()
        fromQuery.close()
        await gateway.stop()
    }

    @Test func theStateStoreFillsWhatTheReplayBufferNoLongerHolds() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--replay-buffer", "2"])
        let live = try gateway.stream("/v1/events")
        _ = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":500}"#)
        let seen = await live.waitFor { $0.compactMap(\.id).count >= 5 }
        let seenIDs = seen.compactMap { $0.id.flatMap { UInt64($0) } }
        let first = try #require(seenIDs.first)
        let stream = try gateway.stream("/v1/events", headers: ["Last-Event-ID": String(first - 1)])
        let replayed = await stream.waitFor { $0.compactMap(\.id).count >= seenIDs.count }
        #expect(!replayed.contains { $0.type == "replay-gap" })
        #expect(Array(replayed.compactMap { $0.id.flatMap { UInt64($0) } }.prefix(seenIDs.count)) == seenIDs)
        live.close()
        stream.close()
        await gateway.stop()
    }
}
