import Foundation
import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    /// Idle sockets holding every slot, or every slot one address may
    /// hold: a new client gets a 503 problem at once, not silence.
    @Suite struct ConnectionSlots {
        static func router() -> Router {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            return router
        }

        /// Opens `count` connections that send nothing, and waits until the
        /// server has accepted all of them.
        static func holdIdle(_ count: Int, server: Server, port: Int, source: String? = nil) async throws -> [RawClient] {
            let before = server.openConnectionCount
            let idle = try await blocking { try (0..<count).map { _ in try RawClient(port: port, source: source) } }
            let accepted = await eventually(within: .seconds(30)) { server.openConnectionCount >= before + count }
            try #require(accepted, "the server accepted \(server.openConnectionCount - before) of \(count) idle connections")
            return idle
        }

        static func health(port: Int, source: String? = nil) async throws -> RawClient.Message {
            try await blocking {
                let client = try RawClient(port: port, timeout: 20, source: source)
                try client.request("GET", "/health")
                return try client.readResponse()
            }
        }

        @Test func atTheConnectionLimitANewClientGets503AndSlotsComeBack() async throws {
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, connectionLimit: 8, maxConnectionsPerClient: 0,
                requestHeaderTimeout: .seconds(600), errorResponses: testProblems)
            try await withServer(Self.router(), configuration: configuration) { server, port in
                var idle = try await Self.holdIdle(8, server: server, port: port)
                let refused = try await Self.health(port: port)
                #expect(refused.head.status == 503)
                #expect(refused.head.header("Connection")?.lowercased() == "close")
                #expect((refused.problem?["detail"] as? String)?.contains("limit of 8 connections") == true)
                #expect(refused.head.header("Retry-After") == "1")
                // A silent socket in the reserve is closed long before the
                // (here ten-minute) header timeout: it cannot keep the
                // reserve full.
                let squatterClosed = try await blocking {
                    let squatter = try RawClient(port: port, timeout: 60)
                    return squatter.waitForClose()
                }
                #expect(squatterClosed)

                for client in idle { client.close() }
                idle = []
                #expect(await eventually(within: .seconds(30)) { server.openConnectionCount == 0 })
                let served = try await Self.health(port: port)
                #expect(served.head.status == 200)
            }
        }

        @Test func oneAddressPastItsLimitGets503OthersAreServed() async throws {
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, connectionLimit: 64, maxConnectionsPerClient: 4,
                requestHeaderTimeout: .seconds(600), errorResponses: testProblems)
            try await withServer(Self.router(), configuration: configuration) { server, port in
                let idle = try await Self.holdIdle(4, server: server, port: port, source: "127.0.0.1")
                let refused = try await Self.health(port: port, source: "127.0.0.1")
                #expect(refused.head.status == 503)
                #expect((refused.problem?["detail"] as? String)?.contains("already holds 4 connections") == true)
                // Another loopback address is another client.
                let other = try await Self.health(port: port, source: "127.0.0.2")
                #expect(other.head.status == 200)
                idle[0].close()
                #expect(await eventually(within: .seconds(30)) { server.openConnectionCount == 3 })
                let again = try await Self.health(port: port, source: "127.0.0.1")
                #expect(again.head.status == 200)
                _ = idle
            }
        }
    }
}
