import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    @Suite struct Connections {
        static func router(sleeping: Duration = .zero, active: Counter = Counter()) -> Router {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            router.get("/sleep") { _ in
                active.increment()
                defer { active.decrement() }
                try await Task.sleep(for: sleeping)
                return .text("slept\n")
            }
            return router
        }

        @Test func curlReusesOneConnectionForManyRequests() async throws {
            try await withServer(Self.router()) { _, port in
                let url = "http://127.0.0.1:\(port)/health"
                // One `-o` per URL: curl applies each to the next URL only.
                let result = try await curl(["-w", "%{num_connects} %{http_code}\n"] + Array(repeating: ["-o", "/dev/null", url], count: 5).flatMap { $0 })
                let lines = result.output.split(separator: "\n")
                #expect(lines == ["1 200", "0 200", "0 200", "0 200", "0 200"])
            }
        }

        @Test func manyRequestsOnOneRawConnection() async throws {
            try await withServer(Self.router()) { server, port in
                let bodies = try await blocking {
                    let client = try RawClient(port: port)
                    return try (0..<50).map { _ in
                        try client.request("GET", "/health")
                        return try client.readResponse().text
                    }
                }
                #expect(bodies == Array(repeating: "ok\n", count: 50))
            }
        }

        @Test func slowHandlersRunConcurrently() async throws {
            let active = Counter()
            try await withServer(Self.router(sleeping: .milliseconds(200), active: active)) { _, port in
                let urls = (0..<50).map { "http://127.0.0.1:\(port)/sleep?n=\($0)" }
                let started = ContinuousClock.now
                let result = try await curl(["--parallel", "--parallel-max", "50", "-w", "%{http_code}\n"] + urls.flatMap { ["-o", "/dev/null", $0] })
                let elapsed = ContinuousClock.now - started
                #expect(result.output.split(separator: "\n").filter { $0 == "200" }.count == 50)
                // Serially this is 10 s; concurrently about 0.2 s. The bound is
                // generous for a loaded machine and still far from serial.
                #expect(elapsed < .seconds(5))
                #expect(active.peak >= 10)
            }
        }

        @Test func portZeroPicksDistinctFreePorts() async throws {
            try await withServer(Self.router()) { first, firstPort in
                try await withServer(Self.router()) { second, secondPort in
                    #expect(firstPort > 0 && secondPort > 0 && firstPort != secondPort)
                    #expect(first.isRunning && second.isRunning)
                }
            }
        }

        @Test func servesIPv6Loopback() async throws {
            let configuration = ServerConfiguration(host: "::1", port: 0)
            try await withServer(Self.router(), configuration: configuration) { _, port in
                let result = try await curl(["-g", "http://[::1]:\(port)/health"])
                #expect(result.output == "ok\n")
            }
        }

        @Test func dualStackServesBothFamilies() async throws {
            let configuration = ServerConfiguration(host: "::", port: 0)
            try await withServer(Self.router(), configuration: configuration) { _, port in
                let v4 = try await curl(["http://127.0.0.1:\(port)/health"])
                let v6 = try await curl(["-g", "http://[::1]:\(port)/health"])
                #expect(v4.output == "ok\n")
                #expect(v6.output == "ok\n")
            }
        }

        @Test func portInUseAndSecondStartFail() async throws {
            try await withServer(Self.router()) { server, port in
                let clash = Server(configuration: ServerConfiguration(host: "127.0.0.1", port: port), responder: Self.router(), logger: quietLogger())
                #expect(throws: ServerError.self) { try clash.start() }
                #expect(!clash.isRunning)
                let error = #expect(throws: ServerError.self) { try server.start() }
                #expect(error?.code == .alreadyStarted)
            }
        }

        @Test func badHostIsReported() {
            let server = Server(configuration: ServerConfiguration(host: "no such host.invalid", port: 0), responder: Self.router(), logger: quietLogger())
            let error = #expect(throws: ServerError.self) { try server.start() }
            #expect(error?.code == .invalidAddress)
        }
    }
}
