import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    /// Every head within the documented limits is answered, and every one
    /// past them gets the error factory's problem: never a closed
    /// connection, never libmicrohttpd's HTML page, until the head is more
    /// than the connection's memory holds (documented). The default limits:
    /// 4 KiB of request line and headers, 100 header fields.
    @Suite struct HeadLimits {
        struct Probe: Sendable, CustomTestStringConvertible {
            let name: String
            let head: String
            /// The status expected; a problem body unless 200.
            let status: Int
            /// Whether the answer is the error factory's (false: past what
            /// the connection's memory holds, libmicrohttpd answers itself,
            /// as the README and openapi.yaml say).
            var ours = true

            var testDescription: String { "\(name) (\(head.utf8.count) bytes)" }
        }

        static func request(_ target: String, fields: [String] = []) -> String {
            "GET \(target) HTTP/1.1\r\nHost: t\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        }

        /// A target with `count` query items of `width` bytes each.
        static func query(_ count: Int, width: Int = 1) -> String {
            "/x?" + Array(repeating: String(repeating: "a", count: width), count: count).joined(separator: "&")
        }

        static let probes: [Probe] = [
            Probe(name: "a 402-byte target with 200 query items", head: request(query(200)), status: 200),
            Probe(name: "1,000 query items within the limit", head: request(query(1000, width: 2)), status: 200),
            Probe(name: "a head just under 4 KiB", head: request("/x", fields: ["X-Big: " + String(repeating: "b", count: 3990)]), status: 200),
            Probe(name: "100 header fields", head: request("/x", fields: (2..<101).map { "X-\($0): v" }), status: 200),
            Probe(name: "a 12,000-byte head", head: request("/x", fields: ["X-Big: " + String(repeating: "b", count: 11_950)]), status: 431),
            Probe(name: "200 header fields in 2 KiB", head: request("/x", fields: (1..<200).map { "X-\($0): v" }), status: 431),
            Probe(name: "300 short header fields", head: request("/x", fields: (1..<300).map { "X\($0):" }), status: 431),
            Probe(name: "10,000 query items", head: request(query(10_000)), status: 414),
            Probe(name: "a 16 KiB target", head: request("/x?q=" + String(repeating: "q", count: 16 * 1024)), status: 414),
            // Documented: libmicrohttpd's own answers, past what the pool holds.
            Probe(name: "a 30 KiB head", head: request("/x", fields: ["X-Big: " + String(repeating: "b", count: 30 * 1024)]), status: 431, ours: false),
            Probe(name: "a 30 KiB target", head: request("/x?q=" + String(repeating: "q", count: 30 * 1024)), status: 414, ours: false),
            Probe(name: "600 short header fields", head: request("/x", fields: (1..<600).map { "X\($0):" }), status: 431, ours: false),
        ]

        @Test(arguments: probes)
        func isAnsweredOrRefusedWithAProblem(_ probe: Probe) async throws {
            var router = Router()
            router.get("/x") { request in .text("\(request.query.count) \(request.headers.count)\n") }
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, errorResponses: testProblems)
            let response = try await sendRaw(probe.head, to: router, configuration: configuration)
            #expect(response.head.status == probe.status, "\(response.text.prefix(200))")
            if probe.status != 200 && probe.ours {
                #expect(response.problem?["status"] as? Int == probe.status, "not a problem: \(response.text.prefix(200))")
            }
        }
    }
}
