import Foundation
import Testing

@testable import GatewayCoreBluetooth

@Suite struct ServerSentEventParserTests {
    @Test func eventsAsTheStandardSays() {
        var parser = ServerSentEventParser()
        let events = parser.feed(
            Array(": heartbeat\n\nid: 7\nevent: notification\ndata: {\"a\":1}\n\ndata: one\ndata: two\r\n\r\nevent: x\n\n".utf8))
        #expect(events == [
            ServerSentEvent(id: "7", type: "notification", data: #"{"a":1}"#),
            ServerSentEvent(id: "7", type: "message", data: "one\ntwo"),
        ])
    }

    @Test func eventsSplitAnywhereAcrossReads() {
        let stream = Array("id: 1\nevent: discovered\ndata: {\"device\":{}}\n\nid: 2\revent: lost\rdata:x\r\r".utf8)
        for split in 0...stream.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(stream[..<split]) + parser.feed(stream[split...])
            #expect(events.map(\.type) == ["discovered", "lost"], "split at \(split)")
            #expect(events.last?.data == "x")
        }
    }
}
