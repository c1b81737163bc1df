import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// Bodies are read only for heads the responder admits, and the memory
    /// they hold is bounded per client and in total.
    @Suite struct BodyAdmission {
        /// Refuses, in the head and in the chain alike, every request
        /// without `X-Key: ok`.
        struct RequireKey: Middleware {
            func handle(_ request: Request, next: Next) async throws -> Response {
                guard admitsBody(of: request) else { throw HTTPError(.unauthorized, "no key") }
                return try await next(request)
            }

            func admitsBody(of head: Request) -> Bool { head.headers["X-Key"] == "ok" }
        }

        static func router(_ calls: Counter) -> Router {
            var router = Router(errorResponses: testProblems)
            router.use(RequireKey())
            router.post("/upload") { request in
                calls.increment()
                return .text("\(request.body.count)\n")
            }
            return router
        }

        @Test func aRefusedHeadIsAnsweredBeforeItsBody() async throws {
            let calls = Counter()
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, errorResponses: testProblems)
            try await withServer(Self.router(calls), configuration: configuration) { _, port in
                let (refused, admitted) = try await blocking {
                    // The body is never sent: the 401 comes from the head.
                    // (The server runs in the test process, on the pool
                    // every suite shares: at a full run's start on two
                    // cores its answer has waited more than the clients'
                    // usual 10 s, in two CI runs; 60 s, as the
                    // integration tests allow.)
                    let refusing = try RawClient(port: port, timeout: 60)
                    try refusing.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 500000\r\n\r\n")
                    let refused = try refusing.readResponse()
                    let closed = refusing.waitForClose()
                    let admitting = try RawClient(port: port, timeout: 60)
                    try admitting.request("POST", "/upload", headers: ["X-Key: ok"], body: "12345")
                    return ((refused, closed), try admitting.readResponse())
                }
                #expect(refused.0.head.status == 401)
                #expect(refused.0.problem?["detail"] as? String == "no key")
                #expect(refused.0.head.header("Connection")?.lowercased() == "close")
                #expect(refused.1, "the connection stayed open with its body unread")
                #expect(admitted.head.status == 200)
                #expect(admitted.text == "5\n")
                #expect(calls.count == 1)
            }
        }

        @Test func aChunkedBodyOfARefusedHeadIsNotRead() async throws {
            let calls = Counter()
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, errorResponses: testProblems)
            try await withServer(Self.router(calls), configuration: configuration) { _, port in
                let refused = try await blocking {
                    let client = try RawClient(port: port)
                    try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(refused.head.status == 401)
                #expect(calls.count == 0)
            }
        }

        /// Bodies held at once by one client, and by all, stop at their
        /// limits with a 503 problem (before the body when its length is
        /// declared); what is given back can be taken again.
        @Test func bodyMemoryIsBoundedPerClientAndInTotal() async throws {
            let calls = Counter()
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, requestBodyMemoryLimit: 300_000, requestBodyMemoryLimitPerClient: 200_000,
                errorResponses: testProblems)
            try await withServer(Self.router(calls), configuration: configuration) { server, port in
                let head = "POST /upload HTTP/1.1\r\nHost: t\r\nX-Key: ok\r\nContent-Length: 100000\r\n\r\n"
                // Two bodies half sent from 127.0.0.1 hold its 200,000.
                let (first, second) = try await blocking {
                    let first = try RawClient(port: port), second = try RawClient(port: port)
                    for client in [first, second] {
                        try client.send(head)
                        try client.send(String(repeating: "a", count: 10))
                    }
                    return (first, second)
                }
                #expect(await eventually { server.requestBodyBytesHeld == 200_000 })
                let (perClient, other) = try await blocking {
                    let third = try RawClient(port: port)
                    try third.send(head)
                    let perClient = try third.readResponse()
                    // Another address has room for one: the total is 300,000.
                    let other = try RawClient(port: port, source: "127.0.0.2")
                    try other.send(head)
                    return (perClient, other)
                }
                #expect(await eventually { server.requestBodyBytesHeld == 300_000 })
                let statuses = try await blocking {
                    let another = try RawClient(port: port, source: "127.0.0.3")
                    try another.send(head)
                    let total = try another.readResponse()
                    // A finished body gives its memory back.
                    try first.send(String(repeating: "a", count: 99_990))
                    let done = try first.readResponse()
                    let again = try RawClient(port: port, source: "127.0.0.3")
                    try again.send(head + String(repeating: "c", count: 100_000))
                    return [perClient, total, done, try again.readResponse()]
                }
                withExtendedLifetime((second, other)) {}
                #expect(statuses.map(\.head.status) == [503, 503, 200, 200])
                let details = statuses.map { $0.problem?["detail"] as? String ?? "" }
                #expect(details[0].contains("this client"), "\(details[0])")
                #expect(details[1].contains("the server's"), "\(details[1])")
                #expect(statuses[0].head.header("Retry-After") == "1")
            }
        }
    }
}
