import Foundation
import Synchronization
import TestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCore
@testable import HTTPServer

/// Streams that resume from an old id catch up at the pace their client
/// reads, then go live with no gap and no duplicate.
@Suite struct EventReplayTests {
    /// An event about the size of a notification's.
    static func event(_ index: Int) -> JSON {
        .object([
            ("type", .string("characteristic-value")), ("timestamp", .string("2026-11-24T10:00:00.000Z")),
            ("address", .string("C4:7C:8D:6A:3E:01")), ("adapter", .string("hci0")),
            ("characteristic", .string("00002a37-0000-1000-8000-00805f9b34fb")), ("handle", .int(13)),
            ("value", .string(String(index, radix: 16))), ("encoding", .string("hex")),
        ])
    }

    /// Serves `log` at `/v1/events` as the gateway does (`?last_event_id=`
    /// resumes) on 127.0.0.1, runs `body` with the port, and stops.
    func withEventServer<T>(
        _ log: EventLog<DescribedEvent>, configuration: StreamConfiguration = StreamConfiguration(), _ body: (Int) async throws -> T
    ) async throws -> T {
        var router = Router()
        router.get("/v1/events") { request in
            let id = log.makeSubscriberID()
            let writer = StreamWriter(configuration: configuration) { _ in log.unsubscribe(id) }
            log.subscribe(writer, id: id, filter: EventFilter(), after: request.query["last_event_id"].flatMap { UInt64($0) })
            return .eventStream(writer)
        }
        let server = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: router)
        try server.start()
        do {
            let result = try await body(try #require(server.port))
            await server.stop(gracePeriod: .seconds(1))
            return result
        } catch {
            await server.stop(gracePeriod: .seconds(1))
            throw error
        }
    }

    /// Runs `body` on a thread of its own (it blocks on a socket).
    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func aClientResumingFromZeroGetsAHundredThousandEventsThenLiveOnes() async throws {
        // Room for more than is held, so events published during the replay
        // push nothing out.
        let log = EventLog(capacity: 1_000_000)
        for index in 1...100_000 { log.publish(type: "characteristic-value", json: Self.event(index)) }
        try await withEventServer(log) { port in
            let (ids, dropped) = try await blocking { () throws -> ([UInt64], Bool) in
                let stream = try EventSocket(port: port, target: "/v1/events?last_event_id=0")
                var ids: [UInt64] = []
                var dropped = false
                ids.reserveCapacity(100_200)
                while ids.count < 100_200, let event = try stream.next() {
                    if event.comments.contains(where: { $0.contains("dropped") }) { dropped = true }
                    guard let id = event.id.flatMap(UInt64.init) else { continue }
                    ids.append(id)
                    // Live events while the replay is half done, and after it.
                    if ids.count == 50_000 || ids.count == 100_100 {
                        for index in 0..<100 { log.publish(type: "characteristic-value", json: Self.event(index)) }
                    }
                }
                return (ids, dropped)
            }
            #expect(!dropped, "a client catching up is not a slow client")
            #expect(ids.count == 100_200)
            let inOrder = ids == Array(1...100_200)
            #expect(inOrder, "every event once, in id order; first out of place at \(String(describing: ids.indices.first { ids[$0] != UInt64($0 + 1) }))")
        }
    }

    @Test func aResumeOlderThanWhatIsKeptStartsWithTheGap() async throws {
        let log = EventLog(capacity: 1000)
        for index in 1...5000 { log.publish(type: "characteristic-value", json: Self.event(index)) }
        try await withEventServer(log) { port in
            let events = try await blocking { () throws -> [ReceivedEvent] in
                let stream = try EventSocket(port: port, target: "/v1/events?last_event_id=10")
                var events: [ReceivedEvent] = []
                while events.count < 1002, let event = try stream.nextEvent() {
                    events.append(event)
                    if events.count == 1001 { log.publish(type: "characteristic-value", json: Self.event(0)) }
                }
                return events
            }
            let gap = try #require(events.first)
            #expect(gap.type == "replay-gap")
            #expect(gap.id == nil, "the gap leaves the client's last event id as it was")
            #expect(gap.json["last_event_id"] as? Int == 10)
            #expect(gap.json["oldest_available"] as? Int == 4001)
            #expect(events.dropFirst().map(\.id) == (4001...5001).map { String($0) })
        }
    }

    /// Drains what `writer` has queued, as its connection would, and waits
    /// (bounded) for the refill that the drain starts to queue more, until
    /// `enough` holds for everything drained so far.
    func drain(_ writer: StreamWriter, until enough: ([String]) -> Bool) async -> [String] {
        var frames: [String] = []
        var text = ""
        let deadline = ContinuousClock.now + .seconds(30)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while ContinuousClock.now < deadline {
            if writer.bufferedByteCount > 0 {
                let count = buffer.withUnsafeMutableBytes { writer.read(into: $0, serverStopping: false) }
                text += String(decoding: buffer[0..<count], as: UTF8.self)
                let blocks = text.components(separatedBy: "\n\n")
                frames += blocks.dropLast()
                text = blocks.last ?? ""
                if enough(frames) { return frames }
            } else {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        return frames
    }

    static func id(_ frame: String) -> UInt64? {
        frame.split(separator: "\n").first { $0.hasPrefix("id: ") }.flatMap { UInt64($0.dropFirst(4)) }
    }

    @Test func eventsPushedOutBeforeASlowReplayReachesThemAreMarkedAsAGap() async throws {
        let log = EventLog(capacity: 100)
        let padding = String(repeating: "p", count: 2000)
        for index in 1...100 { log.publish(type: "t", data: "\(index) \(padding)") }
        let writer = StreamWriter()
        log.subscribe(writer, id: log.makeSubscriberID(), filter: EventFilter(), after: 0)
        // The first batch is queued; the rest waits for the client.
        let firstBatch = frames(writer.queuedText())
        #expect(!firstBatch.isEmpty && firstBatch.count < 100)
        let lastQueued = try #require(firstBatch.last.flatMap(Self.id))
        // Meanwhile the buffer turns over entirely.
        for index in 101...200 { log.publish(type: "t", data: "\(index) \(padding)") }
        let received = await drain(writer) { $0.contains { Self.id($0) == 200 } }
        let gapIndex = try #require(received.firstIndex { $0.contains("event: replay-gap") })
        #expect(received[..<gapIndex].compactMap(Self.id) == Array(1...lastQueued), "the first batch, then the gap")
        #expect(received[gapIndex] == #"event: replay-gap\#ndata: {"last_event_id":\#(lastQueued),"oldest_available":101}"#)
        #expect(received[(gapIndex + 1)...].compactMap(Self.id) == Array(101...200))
        // Caught up: the stream is live.
        log.publish(type: "t", data: "201")
        #expect(frames(writer.queuedText()).compactMap(Self.id) == [201])
    }

    func frames(_ text: String) -> [String] {
        text.components(separatedBy: "\n\n").filter { !$0.isEmpty }
    }

    @Test func anIDThisLogNeverGaveGetsTheGapAndEverythingKept() {
        // A client that last saw id 500 before the gateway restarted.
        let log = EventLog(capacity: 10)
        for index in 1...3 { log.publish(type: "t", data: "\(index)") }
        let writer = StreamWriter()
        log.subscribe(writer, id: log.makeSubscriberID(), filter: EventFilter(), after: 500)
        let received = frames(writer.queuedText())
        #expect(received.first == #"event: replay-gap\#ndata: {"last_event_id":500,"oldest_available":1}"#)
        #expect(received.dropFirst().compactMap(Self.id) == [1, 2, 3])

        // Once the buffer has turned over, still one gap only.
        for index in 4...20 { log.publish(type: "t", data: "\(index)") }
        let later = StreamWriter()
        log.subscribe(later, id: log.makeSubscriberID(), filter: EventFilter(), after: 500)
        let receivedLater = frames(later.queuedText())
        #expect(receivedLater.first == #"event: replay-gap\#ndata: {"last_event_id":500,"oldest_available":11}"#)
        #expect(receivedLater.dropFirst().compactMap(Self.id) == Array(11...20))
        #expect(receivedLater.filter { $0.contains("replay-gap") }.count == 1)
    }

    @Test func aFilterThatTakesFewOfManyEventsStillCatchesUp() async {
        let log = EventLog(capacity: 20_000)
        for index in 1...20_000 { log.publish(type: index % 10_000 == 0 ? "rare" : "common", data: "\(index)") }
        let writer = StreamWriter()
        log.subscribe(writer, id: log.makeSubscriberID(), filter: EventFilter(types: ["rare"]), after: 0)
        let replayed = await drain(writer) { $0.count == 2 }
        #expect(replayed.compactMap(Self.id) == [10_000, 20_000])
        log.publish(type: "common", data: "skipped")
        log.publish(type: "rare", data: "live")
        #expect(await drain(writer) { !$0.isEmpty }.compactMap(Self.id) == [20_002])
    }

    @Test func aStreamThatEndsWhileCatchingUpNeverGoesLive() async {
        let log = EventLog(capacity: 10_000)
        for index in 1...10_000 { log.publish(type: "t", data: "\(index) \(String(repeating: "p", count: 100))") }
        let writer = StreamWriter()
        let token = log.makeSubscriberID()
        log.subscribe(writer, id: token, filter: EventFilter(), after: 0)
        #expect(log.subscriberCount == 1)
        log.unsubscribe(token)
        #expect(log.subscriberCount == 0)
        // The client takes the first batch; the refill it starts finds the
        // stream gone, writes nothing and stops the writer pulling.
        _ = await drain(writer) { _ in writer.bufferedByteCount == 0 }
        #expect(await eventually(within: .seconds(30)) { writer.state.withLock { $0.refill == nil && !$0.refilling } })
        log.publish(type: "t", data: "live")
        #expect(log.subscriberCount == 0)
        #expect(writer.bufferedByteCount == 0)
    }
}
