import Foundation
import HTTPServer
import Synchronization
import Testing

extension HTTPServerTests {
    /// A client that closes its sending side once its request is sent
    /// (shutdown(SHUT_WR), as `nc -N` or a one-shot script does) still
    /// gets the response.
    @Suite struct HalfClose {
        static func router(_ release: Gate) -> Router {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            router.get("/slow") { _ in
                // Answers only after the client's end of stream has arrived.
                await release.wait()
                return .text("slow\n")
            }
            return router
        }

        @Test(arguments: ["/health", "/slow"])
        func halfClosedClientGetsItsResponse(path: String) async throws {
            let gate = Gate()
            try await withServer(Self.router(gate), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)) {
                _, port in
                let client = try RawClient(port: port)
                try await blocking {
                    try client.request("GET", path)
                    client.shutdownWrite()
                }
                gate.open()
                let (response, rest) = try await blocking { (try client.readResponse(), client.readToEnd()) }
                #expect(response.head.status == 200)
                #expect(response.text == (path == "/slow" ? "slow\n" : "ok\n"))
                #expect(rest.isEmpty)
            }
        }

        @Test func halfClosedHeadGetsNoBody() async throws {
            let gate = Gate()
            try await withServer(Self.router(gate), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)) {
                _, port in
                let client = try RawClient(port: port)
                try await blocking {
                    try client.request("HEAD", "/slow")
                    client.shutdownWrite()
                }
                gate.open()
                let bytes = try await blocking { client.readToEnd() }
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(text.contains("Content-Length: 5\r\n"))
                #expect(text.hasSuffix("\r\n\r\n"))
            }
        }
    }
}

/// A one-shot gate handlers wait on until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
