import Foundation
import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    @Suite struct Shutdown {
        @Test func stopEndsOpenStreamsAndReturns() async throws {
            let hub = StreamHub()
            var router = Router()
            router.get("/events", use: hub.handler())
            let server = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: router, logger: testLogger())
            try server.start()
            let port = try #require(server.port)
            let streams = try await blocking {
                try (0..<5).map { _ in try EventStreamClient.open(port: port, target: "/events") }
            }
            #expect(await eventually { hub.count == 5 })
            for index in 0..<5 { hub.writer(index).write(ServerSentEvent(id: "1", data: "before stop")) }

            // Clients read on their own threads while the server stops.
            let readers = Task {
                try await blocking {
                    try streams.map { stream -> [String?] in
                        var ids: [String?] = []
                        while let event = try stream.nextEvent() { ids.append(event.id) }
                        return ids
                    }
                }
            }
            let started = ContinuousClock.now
            // A grace period far longer than the bound: a stop that waited
            // for it cannot pass, however slowly a loaded machine runs.
            await server.stop(gracePeriod: .seconds(60))
            let took = ContinuousClock.now - started
            let seen = try await readers.value
            #expect(seen == Array(repeating: ["1"], count: 5), "each stream delivers its data, then ends")
            #expect(took < .seconds(30), "stop waited for streams that should have ended at once (\(took))")
            #expect(!server.isRunning && server.port == nil)
            #expect(await eventually { hub.endCount == 5 })
            #expect(hub.allEnds.allSatisfy { $0 == .serverStopped })
            #expect(throws: (any Error).self) { try RawClient(port: port, timeout: 2) }
            await server.stop()  // a second stop does nothing
        }

        @Test func stopCutsShortAHandlerThatOutlivesTheGracePeriod() async throws {
            let entered = Counter(), cancelled = Counter()
            var router = Router()
            router.get("/hang") { _ in
                entered.increment()
                do { try await Task.sleep(for: .seconds(120)) } catch { cancelled.increment() }
                return .text("too late\n")
            }
            let server = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: router, logger: testLogger())
            try server.start()
            let port = try #require(server.port)
            let client = try RawClient(port: port)
            try await blocking { try client.request("GET", "/hang") }
            #expect(await eventually { entered.count == 1 })
            let started = ContinuousClock.now
            await server.stop(gracePeriod: .milliseconds(300))
            // Far below the handler's two minutes, whatever the machine's load.
            #expect(ContinuousClock.now - started < .seconds(60))
            let reply = try await blocking { String(decoding: client.readToEnd(), as: UTF8.self) }
            #expect(!reply.contains("200"), "a handler cut short must not answer 200: \(reply)")
            // The connection went away, so the handler's task was cancelled.
            #expect(await eventually { cancelled.count == 1 })
        }

        @Test func stopWaitsForHandlersWithinTheGracePeriod() async throws {
            var router = Router()
            router.get("/slow") { _ in
                try await Task.sleep(for: .milliseconds(300))
                return .text("done\n")
            }
            let server = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: router, logger: testLogger())
            try server.start()
            let port = try #require(server.port)
            let client = try RawClient(port: port)
            try await blocking { try client.request("GET", "/slow") }
            #expect(await eventually { server.activeRequestCount == 1 })
            await server.stop(gracePeriod: .seconds(5))
            let response = try await blocking { try client.readResponse() }
            #expect(response.head.status == 200)
            #expect(response.text == "done\n")
            #expect(response.head.header("Connection")?.lowercased() == "close")
        }

        @Test func serverDeallocatedWhileRunningShutsDown() async throws {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            var port = 0
            do {
                let server = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: router, logger: testLogger())
                try server.start()
                port = try #require(server.port)
                let result = try await curl(["http://127.0.0.1:\(port)/health"])
                #expect(result.output == "ok\n")
            }
            // The last reference is gone: the daemon stopped with it.
            let refused = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health"])
            #expect(refused.output == "000")
        }
    }
}
