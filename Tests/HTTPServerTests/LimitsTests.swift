import Foundation
import HTTPServer
import Synchronization
import Testing

extension HTTPServerTests {
    @Suite struct Limits {
        static let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, maxHeaderSize: 2048, maxRequestBodySize: 16 * 1024)

        /// Counts handler calls, to show refused requests never reach one.
        static func countingRouter(_ calls: Counter) -> Router {
            var router = Router()
            router.post("/upload") { request in
                calls.increment()
                return .text("\(request.body.count)")
            }
            return router
        }

        @Test func bodyWithinLimitIsAccepted() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                let body = String(repeating: "x", count: 16 * 1024)
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("POST", "/upload", body: body)
                    return try client.readResponse()
                }
                #expect(response.head.status == 200)
                #expect(response.text == "16384")
            }
        }

        @Test func declaredOversizedBodyIs413BeforeTheBodyIsSent() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                // Expect: 100-continue: the client holds the body back, so a 413
                // here proves the server decided from Content-Length alone.
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(response.head.status == 413)
                #expect(calls.count == 0)
            }
        }

        @Test func aBodyAlreadyOnItsWayIsReadBeforeIts413() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                // No Expect: the client sends the body right behind the
                // headers. Answering and closing before reading it would
                // reset the connection under the client's later writes.
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 20480\r\n\r\n")
                    for _ in 0..<5 {
                        Thread.sleep(forTimeInterval: 0.05)
                        try client.send(String(repeating: "z", count: 4096))
                    }
                    return try client.readResponse()
                }
                #expect(response.head.status == 413)
                #expect(calls.count == 0)
            }
        }

        @Test func oversizedBodyOverCurlIs413() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("body-\(UUID().uuidString)")
                try Data(repeating: 0x41, count: 100 * 1024).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let result = try await curl([
                    "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "@\(file.path)",
                    "http://127.0.0.1:\(port)/upload",
                ])
                #expect(result.output == "413")
                #expect(calls.count == 0)
            }
        }

        @Test func chunkedUploadGoingOverTheLimitIs413() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                    let chunk = String(repeating: "y", count: 4096)
                    // 5 chunks of 4 KiB: the fifth goes over 16 KiB.
                    for _ in 0..<5 { try client.send("1000\r\n\(chunk)\r\n") }
                    try client.send("0\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(response.head.status == 413)
                #expect(calls.count == 0)
            }
        }

        @Test func runawayChunkedUploadIsCutOff() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                let (sent, reply) = try await blocking {
                    let client = try RawClient(port: port, timeout: 5)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                    let chunk = "1000\r\n" + String(repeating: "y", count: 4096) + "\r\n"
                    // Up to 64 MiB: far more than the server may read.
                    var sent = 0
                    while sent < 64 * 1024 * 1024, (try? client.send(chunk)) != nil { sent += 4096 }
                    return (sent, client.readToEnd())
                }
                #expect(sent < 64 * 1024 * 1024, "the server kept reading")
                #expect(reply.isEmpty)
                #expect(calls.count == 0)
            }
        }

        @Test func oversizedHeadersAre431() async throws {
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: Self.configuration) { _, port in
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("POST", "/upload", headers: ["X-Big: " + String(repeating: "z", count: 4000)], body: "")
                    return try client.readResponse()
                }
                #expect(response.head.status == 431)
                #expect(calls.count == 0)
            }
        }

        @Test func serverErrorsUseTheConfiguredFactory() async throws {
            var configuration = Self.configuration
            configuration.errorResponses = ErrorResponseFactory { error, _ in
                .text(#"{"status":\#(error.status.code)}"#, status: error.status, contentType: "application/problem+json")
            }
            let calls = Counter()
            try await withServer(Self.countingRouter(calls), configuration: configuration) { _, port in
                let response = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(response.head.status == 413)
                #expect(response.head.header("Content-Type") == "application/problem+json")
                #expect(response.text == #"{"status":413}"#)
            }
        }
    }
}
