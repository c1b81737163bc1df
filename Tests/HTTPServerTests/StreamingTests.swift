import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    @Suite struct Streaming {
        static func router(_ hub: StreamHub, _ configuration: StreamConfiguration = StreamConfiguration()) -> Router {
            var router = Router()
            router.get("/events", use: hub.handler(configuration))
            router.get("/health") { _ in .text("ok\n") }
            return router
        }

        @Test func pushesArriveInOrderWithIds() async throws {
            let hub = StreamHub()
            try await withServer(Self.router(hub)) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(stream.head?.status == 200)
                #expect(stream.head?.header("Content-Type") == "text/event-stream")
                #expect(stream.head?.isChunked == true)
                #expect(await eventually { hub.count == 1 })
                let writer = hub.writer(0)
                for id in 1...20 {
                    #expect(writer.write(ServerSentEvent(id: "\(id)", event: "tick", data: "line \(id)\nsecond")))
                }
                let messages = try await blocking { try (1...20).map { _ in try stream.nextEvent() } }
                #expect(messages.map { $0?.id } == (1...20).map { "\($0)" })
                #expect(messages.allSatisfy { $0?.event == "tick" })
                #expect(messages.first??.dataLines == ["line 1", "second"])
            }
        }

        @Test func idleStreamSendsHeartbeats() async throws {
            let hub = StreamHub()
            let configuration = StreamConfiguration(heartbeatInterval: .milliseconds(200))
            try await withServer(Self.router(hub, configuration)) { _, port in
                let started = ContinuousClock.now
                let comments = try await blocking {
                    let stream = try EventStreamClient.open(port: port, target: "/events")
                    return try (0..<3).map { _ in try stream.next() }
                }
                #expect(comments.allSatisfy { $0?.isComment == true })
                // Three beats at 200 ms take about 0.6 s; the bound only
                // rules out beats at the default pace (15 s: 45 s for three)
                // and leaves room for a loaded machine.
                #expect(ContinuousClock.now - started < .seconds(30))
            }
        }

        @Test func cleanupRunsOnceWhenTheClientLeaves() async throws {
            let hub = StreamHub()
            let configuration = StreamConfiguration(heartbeatInterval: .milliseconds(200))
            try await withServer(Self.router(hub, configuration)) { server, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 1 })
                stream.client.close()
                #expect(await eventually { hub.endCount == 1 })
                // Heartbeats keep coming due; none may end the stream again.
                try await Task.sleep(for: .milliseconds(600))
                #expect(hub.allEnds == [.clientDisconnected])
                #expect(!hub.writer(0).write(ServerSentEvent(data: "late")))
                #expect(await eventually { server.activeRequestCount == 0 })
            }
        }

        @Test func idleStreamEndsWhenTheClientLeavesWithoutHeartbeats() async throws {
            let hub = StreamHub()
            let configuration = StreamConfiguration(heartbeatInterval: nil)
            try await withServer(Self.router(hub, configuration)) { server, port in
                let streams = try await blocking {
                    try (0..<3).map { _ in try EventStreamClient.open(port: port, target: "/events") }
                }
                #expect(await eventually { hub.count == 3 })
                // Nothing is ever written: only the hang-up watcher can tell
                // that the second client left.
                streams[1].client.close()
                #expect(await eventually { hub.endCount == 1 })
                #expect(hub.allEnds == [.clientDisconnected])
                #expect(await eventually { server.activeRequestCount == 2 })
                // The others still stream.
                hub.writer(0).write(ServerSentEvent(id: "1", data: "still here"))
                hub.writer(2).write(ServerSentEvent(id: "2", data: "still here"))
                let ids = try await blocking { [try streams[0].nextEvent()?.id, try streams[2].nextEvent()?.id] }
                #expect(ids == ["1", "2"])
            }
        }

        @Test func bytesFromAStreamingClientDoNotEndItsStream() async throws {
            let hub = StreamHub()
            let configuration = StreamConfiguration(heartbeatInterval: nil)
            try await withServer(Self.router(hub, configuration)) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 1 })
                // A pipelined request waits for the stream; it is no hang-up.
                try stream.client.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                try await Task.sleep(for: .milliseconds(300))
                #expect(hub.endCount == 0)
                hub.writer(0).write(ServerSentEvent(id: "7", data: "after the bytes"))
                let event = try await blocking { try stream.nextEvent() }
                #expect(event?.id == "7")
                #expect(hub.endCount == 0)
            }
        }

        @Test func serverFinishEndsTheStreamAfterItsData() async throws {
            let hub = StreamHub()
            try await withServer(Self.router(hub)) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 1 })
                hub.writer(0).write(ServerSentEvent(id: "1", data: "last"))
                hub.writer(0).finish()
                let (last, end) = try await blocking { (try stream.nextEvent(), try stream.next()) }
                #expect(last?.id == "1")
                #expect(end == nil)
                #expect(await eventually { hub.allEnds == [.finished] })
            }
        }

        @Test func streamWrittenAndFinishedBeforeItIsSentIsDelivered() async throws {
            var router = Router()
            router.get("/fixed") { _ in
                let writer = StreamWriter()
                for id in 1...3 { writer.write(ServerSentEvent(id: "\(id)", data: "x")) }
                writer.finish()
                return .eventStream(writer)
            }
            try await withServer(router) { _, port in
                let ids = try await blocking {
                    let stream = try EventStreamClient.open(port: port, target: "/fixed")
                    var ids: [String?] = []
                    while let event = try stream.nextEvent() { ids.append(event.id) }
                    return ids
                }
                #expect(ids == ["1", "2", "3"])
            }
        }

        @Test func headOnAStreamRouteSendsHeadersAndEndsTheWriter() async throws {
            let hub = StreamHub()
            try await withServer(Self.router(hub)) { _, port in
                let (head, rest) = try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("HEAD", "/events")
                    return (try client.readResponse(head: true), client.readToEnd())
                }
                #expect(head.head.status == 200)
                #expect(head.head.header("Content-Type") == "text/event-stream")
                #expect(head.head.isChunked, "the same framing header as GET")
                // libmicrohttpd sends a stray chunk terminator after a HEAD
                // head of unknown length; the server closes the connection so
                // it cannot be taken for the start of the next response.
                #expect(head.head.header("Connection")?.lowercased() == "close")
                #expect(rest.count <= 5)
                #expect(await eventually { hub.allEnds == [.finished] })
            }
        }

        @Test func aWriterServesOnlyOneResponse() async throws {
            let shared = StreamWriter()
            var router = Router()
            router.get("/shared") { _ in .eventStream(shared) }
            try await withServer(router) { _, port in
                let first = try await blocking { try EventStreamClient.open(port: port, target: "/shared") }
                let second = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/shared"])
                #expect(first.head?.status == 200)
                #expect(second.output == "500")
            }
        }
    }
}
