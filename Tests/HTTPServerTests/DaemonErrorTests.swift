import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    /// Heads libmicrohttpd would refuse with its own HTML page when they
    /// fill its connection memory reach the access handler instead, and
    /// get the configured factory's problem.
    @Suite struct DaemonErrors {
        /// A memory limit smaller than twice the header limit: the server
        /// must raise it so its own 414/431 answer first.
        static let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, connectionMemoryLimit: 4096, maxHeaderSize: 2048, errorResponses: testProblems)

        static func router() -> Router {
            var router = Router()
            router.get("/x") { _ in .text("x") }
            return router
        }

        static func send(_ head: String) async throws -> RawClient.Message {
            try await sendRaw(head, to: router(), configuration: configuration)
        }

        @Test func headersOverTheMemoryLimitGetAProblem431() async throws {
            let response = try await Self.send(
                "GET /x HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "z", count: 6000))\r\n\r\n")
            #expect(response.head.status == 431)
            #expect(response.problem?["status"] as? Int == 431)
        }

        @Test func aTargetOverTheHeaderLimitGetsAProblem414() async throws {
            let response = try await Self.send("GET /x?\(String(repeating: "q", count: 3000)) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(response.head.status == 414)
            #expect(response.problem?["status"] as? Int == 414)
            #expect(response.head.header("Connection")?.lowercased() == "close")
        }
    }
}
