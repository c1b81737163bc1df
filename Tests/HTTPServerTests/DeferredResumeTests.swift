import Foundation
import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    /// `StreamWriter.resumeDeferred`: a thread that works in turns wakes
    /// libmicrohttpd's thread once per turn for what it wrote.
    @Suite struct DeferredResumes {
        /// Runs `body` with an idle stream's writer and its client: the
        /// connection is suspended until a write resumes it.
        func withIdleStream(_ body: (StreamWriter, EventStreamClient) async throws -> Void) async throws {
            let hub = StreamHub()
            var router = Router()
            router.get("/events", use: hub.handler(StreamConfiguration(heartbeatInterval: nil)))
            try await withServer(router) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 1 })
                let writer = hub.writer(0)
                // Once the client has an event, libmicrohttpd has asked for
                // more and found nothing: the connection is suspended (the
                // sleep covers a machine too busy to get there at once).
                writer.write(ServerSentEvent(id: "0", data: "ready"))
                #expect(try await blocking { try stream.nextEvent()?.id } == "0")
                try await Task.sleep(for: .milliseconds(200))
                try await body(writer, stream)
                stream.client.close()
            }
        }

        @Test func writesOnADeferringThreadWaitForTheEndOfItsTurn() async throws {
            try await withIdleStream { writer, stream in
                let first = ServerSentEvent(id: "1", data: "one").encoded
                let second = ServerSentEvent(id: "2", data: "two").encoded
                // A thread of its own: the deferral belongs to the thread.
                let heldDuringTurn = try await blocking { () -> Int in
                    StreamWriter.resumeDeferred()  // from now on this thread defers
                    writer.write(first)
                    writer.write(second)
                    Thread.sleep(forTimeInterval: 0.2)
                    let held = writer.bufferedByteCount
                    StreamWriter.resumeDeferred()  // the turn ends
                    return held
                }
                #expect(heldDuringTurn == first.count + second.count, "nothing sent before the turn ended")
                let events = try await blocking { try (0..<2).map { _ in try stream.nextEvent()?.id } }
                #expect(events == ["1", "2"])
                // Other threads are not deferred: this write goes out at once.
                #expect(writer.write(ServerSentEvent(id: "3", data: "three")))
                #expect(try await blocking { try stream.nextEvent()?.id } == "3")
            }
        }

        @Test func whatADeferringThreadWroteLastGoesOutWhenTheThreadEnds() async throws {
            try await withIdleStream { writer, stream in
                // The thread ends its work mid-turn (an event loop whose
                // connection closed), without calling resumeDeferred again.
                try await blocking {
                    StreamWriter.resumeDeferred()
                    writer.write(ServerSentEvent(id: "1", event: "last", data: "bye"))
                }
                #expect(try await blocking { try stream.nextEvent()?.event } == "last")
            }
        }
    }
}
