import Foundation
import PersistedState
import TestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCore
@testable import HTTPServer

/// An event log over the state store: ids go on across restarts, and a
/// stream resuming from an id the buffer no longer (or never) held is
/// served from the store, then goes live, with no gap and no duplicate.
@Suite struct StoredEventLogTests {
    let replay = EventReplayTests()

    func makeDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("event-log-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Reads `count` events with ids from `target` (skipping comments).
    func read(_ count: Int, port: Int, target: String) async throws -> [ReceivedEvent] {
        try await replay.blocking { () throws -> [ReceivedEvent] in
            let stream = try EventSocket(port: port, target: target)
            var events: [ReceivedEvent] = []
            while events.count < count, let event = try stream.next() {
                if !event.isComment { events.append(event) }
            }
            return events
        }
    }

    @Test func idsContinueAcrossARestartAndAResumeFromBeforeItMissesNothing() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store.open(directory: directory)
            let log = EventLog(capacity: 16, store: store)
            for index in 1...100 { log.publish(type: "characteristic-value", device: index % 2 == 0 ? "AA:BB:CC:DD:EE:02" : nil, json: EventReplayTests.event(index)) }
            #expect(log.nextID() == 101, "a reserved id is not stored")
            try await store.flush()
            await store.close()
        }
        let store = try Store.open(directory: directory)
        let log = EventLog(capacity: 16, store: store)
        #expect(log.publish(type: "characteristic-value", json: EventReplayTests.event(0)) == 102)
        try await replay.withEventServer(log) { port in
            let events = try await read(102 - 5, port: port, target: "/v1/events?last_event_id=4")
            let ids = events.compactMap { $0.id.flatMap(UInt64.init) }
            #expect(ids == Array(5...100) + [102], "\(ids.prefix(10)) … \(ids.suffix(5))")
            #expect(events.allSatisfy { $0.type == "characteristic-value" })
            // The stored data is what a live stream sent.
            let sixth = try #require(events.first { $0.id == "6" })
            #expect(sixth.json["value"] as? String == String(6, radix: 16))
        }
        await store.close()
    }

    @Test func aResumeOlderThanTheBufferIsServedFromTheStoreThenGoesLive() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(directory: directory)
        let log = EventLog(capacity: 100, store: store)
        for index in 1...5_000 { log.publish(type: index % 3 == 0 ? "device-updated" : "characteristic-value", json: EventReplayTests.event(index)) }
        try await replay.withEventServer(log) { port in
            let (ids, gaps) = try await replay.blocking { () throws -> ([UInt64], Int) in
                let stream = try EventSocket(port: port, target: "/v1/events?last_event_id=10")
                var ids: [UInt64] = []
                var gaps = 0
                while ids.count < 5_000 - 10 + 50, let event = try stream.next() {
                    if event.type == "replay-gap" { gaps += 1 }
                    guard let id = event.id.flatMap(UInt64.init) else { continue }
                    ids.append(id)
                    // Live events while the replay still reads the store.
                    if ids.count == 1_000 {
                        for index in 0..<50 { log.publish(type: "characteristic-value", json: EventReplayTests.event(index)) }
                    }
                }
                return (ids, gaps)
            }
            #expect(gaps == 0, "the store holds what the buffer lost")
            #expect(ids == Array(11...5_050), "first out of place at \(String(describing: ids.indices.first { ids[$0] != UInt64($0 + 11) }))")
        }
        await store.close()
    }

    @Test func aFilteredResumeFromTheStoreGetsOnlyWhatItAsked() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(directory: directory)
        let log = EventLog(capacity: 10, store: store)
        for index in 1...300 {
            log.publish(type: "characteristic-value", device: index % 2 == 0 ? "AA:BB:CC:DD:EE:02" : "AA:BB:CC:DD:EE:01", json: EventReplayTests.event(index))
        }
        let id = log.makeSubscriberID()
        let writer = StreamWriter(configuration: StreamConfiguration()) { _ in log.unsubscribe(id) }
        log.subscribe(writer, id: id, filter: EventFilter(types: ["characteristic-value"], device: "AA:BB:CC:DD:EE:02"), after: 0)
        let expected = (1...150).map { "id: \($0 * 2)\n" }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, log.subscriberCount == 1, !writer.queuedText().contains("id: 300\n") {
            try await Task.sleep(for: .milliseconds(10))
        }
        let text = writer.queuedText()
        let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0) + "\n" }
        #expect(ids == expected, "\(ids.prefix(5))")
        writer.finish()
        await store.close()
    }

    /// Events that were published but never stored (here dropped by a
    /// store that cannot keep up; a full disk loses them the same way) are
    /// a `replay-gap` for a client resuming across them after a restart,
    /// never skipped in silence.
    @Test func eventsNeverStoredAreAGapAfterARestart() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            var options = StoreOptions()
            options.maximumQueuedEvents = 10
            options.batchInterval = .seconds(60)
            let store = try Store.open(directory: directory, options: options)
            let log = EventLog(capacity: 16, store: store)
            // 1...10 wait in the queue; 11...30 find it full.
            for index in 1...30 { log.publish(type: "characteristic-value", json: EventReplayTests.event(index)) }
            #expect(store.statistics.lost == 20)
            // Throws: the newest id was dropped; the ten queued commit.
            await #expect(throws: StoreError.self) { try await store.flush() }
            for index in 31...40 { log.publish(type: "characteristic-value", json: EventReplayTests.event(index)) }
            try await store.flush()
            await store.close()
        }
        let store = try Store.open(directory: directory)
        let log = EventLog(capacity: 16, store: store)
        try await replay.withEventServer(log) { port in
            let events = try await read(5 + 1 + 10, port: port, target: "/v1/events?last_event_id=5")
            #expect(events.map { $0.id ?? "gap" } == ["6", "7", "8", "9", "10", "gap"] + (31...40).map(String.init))
            let gap = try #require(events.first { $0.type == "replay-gap" })
            #expect(gap.json["last_event_id"] as? Int == 10)
            #expect(gap.json["oldest_available"] as? Int == 31)
        }
        await store.close()
    }
}
