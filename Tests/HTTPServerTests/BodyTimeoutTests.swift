import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// A request body has `requestBodyTimeout`, plus a second for every
    /// `minimumRequestBodyRate` bytes it delivers, however steadily it
    /// trickles in; a body at a good rate is read whole.
    @Suite struct BodyTimeout {
        static let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, requestBodyTimeout: .seconds(1), minimumRequestBodyRate: 4096,
            idleTimeout: .seconds(600), errorResponses: testProblems)

        static func echo() -> Router {
            var router = Router()
            router.post("/echo") { request in .text("\(request.body.count)\n") }
            return router
        }

        /// Sends `head`, then `piece` every `interval` seconds until the
        /// server closes the connection (true) or a minute passes; the
        /// number of pieces sent comes back too.
        static func trickle(port: Int, head: String, piece: String, interval: Double) async throws -> (Bool, Int) {
            let client = try RawClient(port: port, timeout: 60)
            try client.send(head)
            let sending = Atomic(true)
            let sent = Atomic(0)
            let trickler = Thread {
                while sending.load(ordering: .relaxed), sent.load(ordering: .relaxed) < Int(60 / interval) {
                    guard (try? client.send(piece)) != nil else { break }
                    sent.add(1, ordering: .relaxed)
                    Thread.sleep(forTimeInterval: interval)
                }
            }
            trickler.start()
            let closed = try await blocking { client.waitForClose() }
            sending.store(false, ordering: .relaxed)
            return (closed, sent.load(ordering: .relaxed))
        }

        @Test func aBodyTrickledAByteAtATimeIsClosed() async throws {
            try await withServer(Self.echo(), configuration: Self.configuration) { server, port in
                let head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n"
                let (closed, sent) = try await Self.trickle(port: port, head: head, piece: "a", interval: 0.05)
                #expect(closed, "the server kept the connection after \(sent) bytes")
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aChunkedBodyTrickledSlowlyIsClosed() async throws {
            try await withServer(Self.echo(), configuration: Self.configuration) { _, port in
                let head = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                // 64 bytes every 50 ms is 1,280 bytes/s: under the 4,096 asked.
                let piece = "40\r\n" + String(repeating: "b", count: 64) + "\r\n"
                let (closed, sent) = try await Self.trickle(port: port, head: head, piece: piece, interval: 0.05)
                #expect(closed, "the server kept the connection after \(sent) chunks")
            }
        }

        @Test func aBodyAboveTheMinimumRateIsReadWhole() async throws {
            try await withServer(Self.echo(), configuration: Self.configuration) { _, port in
                let response = try await blocking {
                    let client = try RawClient(port: port, timeout: 60)
                    // 96 KiB in 12 pieces over about 1.2 s, past the first
                    // second: each piece earns two more seconds at 4 KiB/s,
                    // far more than the pause after it.
                    try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 98304\r\n\r\n")
                    for _ in 0..<12 {
                        try client.send(String(repeating: "c", count: 8192))
                        Thread.sleep(forTimeInterval: 0.1)
                    }
                    return try client.readResponse()
                }
                #expect(response.head.status == 200)
                #expect(response.text == "98304\n")
            }
        }
    }
}
