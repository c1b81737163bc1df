import HTTPServer
import Testing

@testable import GatewayAPI

/// SSE frames of JSON, encoded straight into bytes, are the frames that
/// encoding the JSON's text gives.
@Suite struct EventFrameTests {
    @Test func aJSONFrameIsTheFrameOfItsText() {
        let json = JSON.object([
            ("text", .string("line\nbreak\r\nand \"quotes\", \\, tab\t, bell\u{07}, é ✓")),
            ("numbers", .array([.int(-3), .double(1.5), .double(.infinity), .null, .bool(true)])),
        ])
        let text = String(decoding: json.bytes, as: UTF8.self)
        #expect(!text.contains("\n") && !text.contains("\r"))
        #expect(json.eventFrame(id: 42, event: "notification") == ServerSentEvent(id: "42", event: "notification", data: text).encoded)
        #expect(json.eventFrame(id: nil, event: "replay-gap") == ServerSentEvent(event: "replay-gap", data: text).encoded)
    }

    @Test func anEventTypeKeepsToItsLine() {
        let frame = ServerSentEvent.frame(id: 7, event: "a\nb\rc") { $0 += "{}".utf8 }
        #expect(String(decoding: frame, as: UTF8.self) == "id: 7\nevent: abc\ndata: {}\n\n")
    }
}
