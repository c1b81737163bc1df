import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    /// Requests whose body length is ambiguous (RFC 9112 §6.3): a 400
    /// problem, the connection closed, and the bytes behind the head never
    /// served as another request.
    @Suite struct Framing {
        static let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, errorResponses: testProblems)

        static func router(_ calls: Counter) -> Router {
            var router = Router()
            router.post("/upload") { request in
                calls.increment()
                return .text("\(request.body.count)")
            }
            router.get("/smuggled") { _ in
                calls.increment()
                return .text("smuggled")
            }
            return router
        }

        /// Sends `head`, a 5-byte body and a second request right behind;
        /// returns the one response and whatever followed it.
        static func smuggle(_ head: String, version: String = "HTTP/1.1") async throws -> (RawClient.Message, String, Int) {
            let calls = Counter()
            return try await withServer(router(calls), configuration: configuration) { _, port in
                let (response, rest) = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send(
                        "POST /upload \(version)\r\nHost: t\r\n\(head)\r\n"
                            + "hello"
                            + "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
                    let response = try client.readResponse()
                    return (response, String(decoding: client.readToEnd(), as: UTF8.self))
                }
                return (response, rest, calls.count)
            }
        }

        static let cases: [(String, String)] = [
            ("Content-Length: 5\r\nContent-Length: 0\r\n", "2 Content-Length fields"),
            ("Content-Length: 5\r\nContent-Length: 5\r\n", "2 Content-Length fields"),
            ("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "both Content-Length and Transfer-Encoding"),
            ("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "both Content-Length and Transfer-Encoding"),
            ("Transfer-Encoding: gzip\r\n", "only transfer coding accepted is chunked"),
            ("Transfer-Encoding: gzip, chunked\r\n", "only transfer coding accepted is chunked"),
            ("Transfer-Encoding: chunked, identity\r\n", "only transfer coding accepted is chunked"),
            ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "only transfer coding accepted is chunked"),
        ]

        @Test(arguments: cases)
        func ambiguousLengthIs400AndTheConnectionCloses(head: String, reason: String) async throws {
            let (response, rest, calls) = try await Self.smuggle(head)
            #expect(response.head.status == 400)
            #expect(response.head.header("Connection")?.lowercased() == "close")
            let problem = try #require(response.problem)
            #expect(problem["status"] as? Int == 400)
            #expect((problem["detail"] as? String)?.contains(reason) == true)
            #expect(problem["instance"] as? String == "/upload")
            // Nothing after the first response: the second request never ran.
            #expect(rest.isEmpty)
            #expect(calls == 0)
        }

        @Test func transferEncodingInHTTP10Is400() async throws {
            let (response, rest, calls) = try await Self.smuggle("Transfer-Encoding: chunked\r\n", version: "HTTP/1.0")
            #expect(response.head.status == 400)
            #expect(response.problem?["detail"] as? String == "an HTTP/1.0 request cannot use Transfer-Encoding")
            #expect(rest.isEmpty)
            #expect(calls == 0)
        }

        @Test func unambiguousRequestsKeepTheirConnection() async throws {
            let calls = Counter()
            try await withServer(Self.router(calls), configuration: Self.configuration) { _, port in
                let (first, second) = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                    let first = try client.readResponse()
                    try client.request("POST", "/upload", body: "hi")
                    return (first, try client.readResponse())
                }
                #expect(first.text == "5")
                #expect(second.text == "2")
                #expect(calls.count == 2)
            }
        }
    }
}
