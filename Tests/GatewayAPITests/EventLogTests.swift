import HTTPServer
import Synchronization
import Testing

@testable import GatewayAPI
@testable import GatewayCore

@Suite struct EventLogTests {
    /// The SSE text a writer has queued (drained through its buffer).
    func frames(_ writer: StreamWriter) -> [String] {
        writer.queuedText().components(separatedBy: "\n\n").filter { !$0.isEmpty }
    }

    @Test func idsIncreaseAndFiltersApply() {
        let log = EventLog(capacity: 10)
        let all = StreamWriter()
        let device = StreamWriter()
        let notifications = StreamWriter()
        log.subscribe(all, id: log.makeSubscriberID(), filter: EventFilter())
        log.subscribe(device, id: log.makeSubscriberID(), filter: EventFilter(device: "AA:BB:CC:DD:EE:01"))
        log.subscribe(notifications, id: log.makeSubscriberID(), filter: EventFilter(types: ["notification"]))

        #expect(log.publish(type: "device-discovered", device: "AA:BB:CC:DD:EE:01", data: "{}") == 1)
        #expect(log.publish(type: "notification", device: "AA:BB:CC:DD:EE:02", data: #"{"value":"01"}"#) == 2)
        #expect(log.nextID() == 3)
        #expect(log.publish(type: "adapter-state", data: "{}") == 4)

        #expect(frames(all).map { $0.split(separator: "\n").first.map(String.init) } == ["id: 1", "id: 2", "id: 4"])
        #expect(frames(device) == ["id: 1\nevent: device-discovered\ndata: {}"])
        #expect(frames(notifications) == [#"id: 2\#nevent: notification\#ndata: {"value":"01"}"#])
    }

    @Test func resumingReplaysWhatCameAfterTheLastID() {
        let log = EventLog(capacity: 100)
        for index in 1...5 { log.publish(type: index % 2 == 0 ? "even" : "odd", data: "\(index)") }
        let resumed = StreamWriter()
        log.subscribe(resumed, id: log.makeSubscriberID(), filter: EventFilter(types: ["odd"]), after: 1)
        log.publish(type: "odd", data: "7")
        #expect(frames(resumed).map { $0.components(separatedBy: "\n").last } == ["data: 3", "data: 5", "data: 7"])
    }

    @Test func aResumeOlderThanTheBufferIsToldOfTheGap() {
        let log = EventLog(capacity: 3)
        for index in 1...10 { log.publish(type: "t", data: "\(index)") }
        let resumed = StreamWriter()
        log.subscribe(resumed, id: log.makeSubscriberID(), filter: EventFilter(), after: 2)
        let received = frames(resumed)
        #expect(received.first == #"event: replay-gap\#ndata: {"last_event_id":2,"oldest_available":8}"#)
        #expect(received.dropFirst().map { $0.components(separatedBy: "\n").last } == ["data: 8", "data: 9", "data: 10"])
    }

    @Test func unsubscribedWritersGetNothingMore() {
        let log = EventLog()
        let writer = StreamWriter()
        let token = log.makeSubscriberID()
        log.subscribe(writer, id: token, filter: EventFilter())
        log.publish(type: "t", data: "1")
        log.unsubscribe(token)
        log.publish(type: "t", data: "2")
        #expect(frames(writer).count == 1)
        #expect(log.subscriberCount == 0)
    }

    @Test func anEventIsEncodedOnlyWhenAStreamTakesItAndThenOnce() {
        let log = EventLog(capacity: 10)
        let encodings = Mutex(0)
        let counted: @Sendable (String) -> String = { data in
            encodings.withLock { $0 += 1 }
            return data
        }
        log.publish(type: "t", data: counted("1"))
        log.publish(type: "t", data: counted("2"))
        #expect(encodings.withLock { $0 } == 0, "no stream, no encoding")
        let first = StreamWriter()
        let second = StreamWriter()
        log.subscribe(first, id: log.makeSubscriberID(), filter: EventFilter(), after: 0)
        log.subscribe(second, id: log.makeSubscriberID(), filter: EventFilter(), after: 0)
        #expect(encodings.withLock { $0 } == 2, "replayed twice, encoded once each")
        log.publish(type: "t", data: counted("3"))
        #expect(encodings.withLock { $0 } == 3, "a live event is encoded once for every stream")
        #expect(frames(first) == frames(second))
        #expect(frames(first).map { $0.components(separatedBy: "\n").last } == ["data: 1", "data: 2", "data: 3"])
    }
}
