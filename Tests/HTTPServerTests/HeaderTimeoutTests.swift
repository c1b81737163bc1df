import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// A client gets `requestHeaderTimeout` to send a request head, however
    /// slowly it trickles in; open streams are not affected.
    @Suite struct HeaderTimeout {
        static let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, requestHeaderTimeout: .seconds(1), idleTimeout: .seconds(600),
            errorResponses: testProblems)

        @Test func aByteAtATimeSenderIsClosed() async throws {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            try await withServer(router, configuration: Self.configuration) { _, port in
                let client = try RawClient(port: port, timeout: 60)
                let sending = Atomic(true)
                let sent = Atomic(0)
                // One header byte every 50 ms, for up to a minute: far longer
                // than the timeout, and never idle long enough for the idle one.
                let trickle = Thread {
                    _ = try? client.send("GET /health HTTP/1.1\r\nHost: t\r\nX-Slow: ")
                    while sending.load(ordering: .relaxed), sent.load(ordering: .relaxed) < 1200 {
                        guard (try? client.send("a")) != nil else { break }
                        sent.add(1, ordering: .relaxed)
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
                trickle.start()
                let closed = try await blocking { client.waitForClose() }
                sending.store(false, ordering: .relaxed)
                #expect(closed, "the server kept the connection after \(sent.load(ordering: .relaxed)) bytes")
            }
        }

        @Test func aSilentClientIsClosedAndAKeptAliveOneToo() async throws {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            try await withServer(router, configuration: Self.configuration) { server, port in
                let (silentClosed, response, keptClosed) = try await blocking {
                    let silent = try RawClient(port: port, timeout: 60)
                    let kept = try RawClient(port: port, timeout: 60)
                    try kept.request("GET", "/health")
                    let response = try kept.readResponse()
                    return (silent.waitForClose(), response, kept.waitForClose())
                }
                #expect(silentClosed)
                #expect(response.head.status == 200)
                #expect(keptClosed)
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aStreamOutlivesTheHeaderTimeout() async throws {
            let hub = StreamHub()
            var router = Router()
            router.get("/events", use: hub.handler())
            try await withServer(router, configuration: Self.configuration) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events", timeout: 60) }
                #expect(await eventually { hub.count == 1 })
                // A silent connection opened after the stream is closed by the
                // header timeout: the stream's own deadline, had it one, has
                // passed too.
                let closed = try await blocking {
                    let silent = try RawClient(port: port, timeout: 60)
                    return silent.waitForClose()
                }
                #expect(closed)
                #expect(hub.writer(0).write(ServerSentEvent(event: "still", data: "here")))
                let event = try await blocking { try stream.nextEvent() }
                #expect(event?.event == "still")
                #expect(hub.endCount == 0)
            }
        }
    }
}
