import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    @Suite struct Timeouts {
        static let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, idleTimeout: .seconds(1))

        @Test func idleConnectionIsClosedAfterTheTimeout() async throws {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            try await withServer(router, configuration: Self.configuration) { _, port in
                let (first, rest) = try await blocking {
                    let client = try RawClient(port: port, timeout: 10)
                    try client.request("GET", "/health")
                    let first = try client.readResponse()
                    return (first, client.readToEnd())
                }
                #expect(first.text == "ok\n")
                #expect(rest.isEmpty, "the server closed the idle keep-alive connection")
            }
        }

        @Test func suspendedConnectionsOutliveTheIdleTimeout() async throws {
            let hub = StreamHub()
            var router = Router()
            router.get("/slow") { _ in
                try await Task.sleep(for: .milliseconds(2500))
                return .text("late but fine\n")
            }
            router.get("/events", use: hub.handler(StreamConfiguration(heartbeatInterval: nil)))
            try await withServer(router, configuration: Self.configuration) { _, port in
                let slow = try await curl(["http://127.0.0.1:\(port)/slow"])
                #expect(slow.output == "late but fine\n")

                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 1 })
                try await Task.sleep(for: .milliseconds(2500))
                hub.writer(0).write(ServerSentEvent(id: "1", data: "after a long quiet"))
                let event = try await blocking { try stream.nextEvent() }
                #expect(event?.id == "1")
            }
        }
    }
}
