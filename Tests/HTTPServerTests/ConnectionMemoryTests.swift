import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    /// The default connection memory is small (every open stream keeps it):
    /// it must still take ordinary heads and large-ish ones up to
    /// `maxHeaderSize`, and answer a bigger one with the factory's 431.
    @Suite struct ConnectionMemory {
        static let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, errorResponses: testProblems)

        static func router() -> Router {
            var router = Router()
            router.get("/x") { request in .text("\(request.headers["X-Token"]?.count ?? 0)") }
            router.get("/events") { _ in
                let writer = StreamWriter()
                writer.write(ServerSentEvent(id: "1", data: "hello"))
                writer.finish()
                return .eventStream(writer)
            }
            return router
        }

        /// A head like a browser's, with `extra` bytes in one more header.
        static func head(_ path: String, extra: Int) -> String {
            [
                "GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream", "Cache-Control: no-cache",
                "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
                "Accept-Language: en-GB,en;q=0.9", "Accept-Encoding: gzip, deflate, br", "Authorization: Bearer \(String(repeating: "k", count: 64))",
                "Cookie: session=\(String(repeating: "c", count: 200)); theme=dark",
                "X-Token: \(String(repeating: "t", count: extra))",
            ].joined(separator: "\r\n") + "\r\n\r\n"
        }

        static func send(_ head: String) async throws -> RawClient.Message {
            try await sendRaw(head, to: router(), configuration: configuration)
        }

        @Test func anOrdinaryHeadIsServed() async throws {
            let response = try await Self.send(Self.head("/x", extra: 16))
            #expect(response.head.status == 200)
            #expect(response.text == "16")
        }

        @Test func aHeadJustUnderTheHeaderLimitIsServed() async throws {
            let extra = Self.configuration.maxHeaderSize - Self.head("/x", extra: 0).utf8.count - 64
            let response = try await Self.send(Self.head("/x", extra: extra))
            #expect(response.head.status == 200)
            #expect(response.text == "\(extra)")
        }

        @Test func aStreamWithALargeishHeadIsServed() async throws {
            let extra = Self.configuration.maxHeaderSize - Self.head("/events", extra: 0).utf8.count - 64
            let response = try await Self.send(Self.head("/events", extra: extra))
            #expect(response.head.status == 200)
            #expect(response.text.contains("data: hello"))
        }

        @Test func aHeadOverTheHeaderLimitGetsTheFactorys431() async throws {
            let response = try await Self.send(Self.head("/x", extra: Self.configuration.maxHeaderSize + 1024))
            #expect(response.head.status == 431)
            #expect(response.problem?["status"] as? Int == 431)
        }
    }
}
