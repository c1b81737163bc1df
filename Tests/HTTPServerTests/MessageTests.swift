import HTTPServer
import Testing

/// Value types: requests, headers, query items, SSE encoding.
extension HTTPServerTests {
    @Suite struct Messages {
        @Test func requestTargetIsSplitAndDecoded() {
            let request = Request(method: .get, target: "/v1/a%20b/c%2Fd/?x=1&y=%41+B&x=2&empty=&bare")
            #expect(request.path == "/v1/a%20b/c%2Fd/")
            #expect(request.pathSegments == ["v1", "a b", "c/d"])
            #expect(request.query.values(for: "x") == ["1", "2"])
            #expect(request.query["y"] == "A B")
            #expect(request.query["empty"] == "")
            #expect(request.query["bare"] == "")
            #expect(request.query["missing"] == nil)
            #expect(request.query.count == 5)
        }

        @Test func malformedEscapesAreKept() {
            let request = Request(method: .get, target: "/a%zz/b%4?q=%")
            #expect(request.pathSegments == ["a%zz", "b%4"])
            #expect(request.query["q"] == "%")
        }

        @Test func absoluteFormTargetRoutesByPath() {
            let request = Request(method: .get, target: "http://example.com:8080/health?x=1")
            #expect(request.pathSegments == ["health"])
            #expect(request.query["x"] == "1")
        }

        @Test func headerLookupIgnoresCase() {
            var headers: Headers = ["Content-Type": "text/plain", "X-Multi": "1"]
            headers.add(name: "x-multi", value: "2")
            #expect(headers["content-type"] == "text/plain")
            #expect(headers.values(for: "X-MULTI") == ["1", "2"])
            headers["X-Multi"] = "3"
            #expect(headers.values(for: "x-multi") == ["3"])
            headers["content-type"] = nil
            #expect(!headers.contains("Content-Type"))
        }

        @Test func serverSentEventEncoding() {
            let event = ServerSentEvent(id: "7\n8", event: "notify\r", data: "a\nb\r\nc\rd", retry: 1500)
            #expect(String(decoding: event.encoded, as: UTF8.self) == "id: 78\nevent: notify\nretry: 1500\ndata: a\ndata: b\ndata: c\ndata: d\n\n")
            #expect(String(decoding: ServerSentEvent(data: "").encoded, as: UTF8.self) == "data: \n\n")
            #expect(String(decoding: ServerSentEvent.comment("hi\nthere"), as: UTF8.self) == ": hi\n: there\n\n")
            #expect(String(decoding: ServerSentEvent.comment(), as: UTF8.self) == ":\n\n")
        }

        @Test func serverSentEventEncodingOfLineEndsAndUnicode() {
            // Trailing and doubled line ends keep their empty lines; CR LF
            // is one line end; multi-byte characters and NUL in data pass.
            let event = ServerSentEvent(id: "é\0", event: "✓", data: "é\r\n\r\n✓\n\0x\r")
            #expect(
                String(decoding: event.encoded, as: UTF8.self)
                    == "id: é\nevent: ✓\ndata: é\ndata: \ndata: ✓\ndata: \0x\ndata: \n\n")
            #expect(String(decoding: ServerSentEvent.comment("a\r\n\nb"), as: UTF8.self) == ": a\n:\n: b\n\n")
            let json = #"{"value":"0648","encoding":"hex"}"#
            #expect(ServerSentEvent(id: "41", event: "notification", data: json).encoded
                == Array("id: 41\nevent: notification\ndata: \(json)\n\n".utf8))
        }

        @Test func writerBuffersUntilTheLimitThenDrops() async {
            let ended = Counter()
            let writer = StreamWriter(configuration: StreamConfiguration(maxBufferedBytes: 10)) { _ in ended.increment() }
            #expect(writer.write(Array("12345".utf8)))
            #expect(writer.write(Array("67890".utf8)))
            #expect(writer.bufferedByteCount == 10)
            #expect(!writer.write(Array("x".utf8)), "over the limit: dropped")
            #expect(!writer.isOpen)
            #expect(!writer.write(Array("y".utf8)))
            #expect(ended.count == 0, "ends only when its connection is done with it")
        }
    }
}
