import Foundation
import Glibc
import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    @Suite struct Scale {
        @Test func thousandIdleStreamsCostNoCPUAndTheServerStillAnswers() async throws {
            let clients = 1000
            let limit = raiseFileLimit(to: 3 * clients + 200)
            try #require(limit >= 2 * clients + 100, "RLIMIT_NOFILE is \(limit); need about \(2 * clients + 100)")
            let hub = StreamHub()
            var router = Router()
            router.get("/events", use: hub.handler(StreamConfiguration(heartbeatInterval: .seconds(15))))
            router.get("/health") { _ in .text("ok\n") }
            // Every client here is one address: no per-client limit.
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, connectionLimit: clients + 100, maxConnectionsPerClient: 0)
            try await withServer(router, configuration: configuration) { server, port in
                let before = residentKiB()
                let streams = try await blocking {
                    try (0..<clients).map { _ in try EventStreamClient.open(port: port, target: "/events") }
                }
                #expect(streams.allSatisfy { $0.head?.status == 200 })
                #expect(await eventually { hub.count == clients })
                let after = residentKiB()

                // Idle: every stream's connection is suspended, so the
                // server's thread should burn (close to) no CPU.
                let cpuBefore = cpuSeconds()
                try await Task.sleep(for: .seconds(1))
                let cpuIdle = cpuSeconds() - cpuBefore

                let started = ContinuousClock.now
                let health = try await curl(["http://127.0.0.1:\(port)/health"])
                let latency = ContinuousClock.now - started
                #expect(health.output == "ok\n")
                #expect(latency < .seconds(2))
                #expect(cpuIdle < 0.3, "CPU while \(clients) streams idle: \(cpuIdle) s in 1 s")

                // One event to everyone arrives everywhere.
                let bytes = ServerSentEvent(id: "1", event: "hello", data: "all").encoded
                for index in 0..<clients { hub.writer(index).write(bytes) }
                let ids = try await blocking { try streams.map { try $0.nextEvent()?.id } }
                #expect(ids.allSatisfy { $0 == "1" })
                print("""
                    \(clients) idle SSE clients: RSS +\(after - before) KiB \
                    (\((after - before) / clients) KiB each, client side included), \
                    CPU idle \(cpuIdle) s/s, /health in \(latency)
                    """)
                #expect(server.activeRequestCount == clients)
                for stream in streams { stream.client.close() }
            }
            #expect(await eventually { hub.endCount == clients })
            #expect(hub.allEnds.allSatisfy { $0 == .serverStopped || $0 == .clientDisconnected })
        }

        @Test func wrkWith512ConnectionsDoesNotStall() async throws {
            _ = raiseFileLimit(to: 4096)
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            // wrk's connections all come from one address.
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, connectionLimit: 1024, maxConnectionsPerClient: 0)
            try await withServer(router, configuration: configuration) { _, port in
                let result = try await run("/usr/bin/wrk", ["-c", "512", "-t", "2", "-d", "3s", "--latency", "--timeout", "10s", "http://127.0.0.1:\(port)/health"])
                #expect(result.status == 0, "\(result.error)")
                let output = result.output
                let requests = Self.number(after: "requests in", in: output, before: true) ?? 0
                let errors = Self.socketErrors(output)
                let non2xx = Self.number(after: "Non-2xx or 3xx responses:", in: output) ?? 0
                print("wrk -c 512 -t 2 -d 3s:\n\(output)")
                #expect(requests > 1000)
                #expect(non2xx == 0)
                // A stall shows as timeouts. The 10 s timeout (wrk's default is
                // 2 s) is for the start: libmicrohttpd's poll loop accepts one
                // connection per iteration, so when 512 connect at once the
                // last ones wait 1-2 s for their first answer (a plain C
                // server on the same library does the same). A handful of
                // connect errors on a loaded box is tolerated.
                #expect(errors.timeout == 0)
                #expect(errors.total <= 5)
            }
        }

        static func number(after marker: String, in text: String, before: Bool = false) -> Int? {
            guard let range = text.range(of: marker) else { return nil }
            if before {
                let prefix = text[..<range.lowerBound].split(whereSeparator: \.isWhitespace).last
                return prefix.flatMap { Int($0) }
            }
            return text[range.upperBound...].split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
        }

        /// `Socket errors: connect 0, read 0, write 0, timeout 0` (absent when none).
        static func socketErrors(_ text: String) -> (total: Int, timeout: Int) {
            guard let line = text.split(separator: "\n").first(where: { $0.contains("Socket errors:") }) else { return (0, 0) }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            return (numbers.reduce(0, +), numbers.last ?? 0)
        }
    }
}

/// User plus system CPU time, in seconds, of libmicrohttpd's threads
/// (named `MHD-…`) in this process. Only they can busy-loop on idle streams;
/// measuring the whole process would count every other test running in
/// parallel.
func cpuSeconds() -> Double {
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var ticks = 0
    for task in tasks {
        guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
            name.hasPrefix("MHD-"),
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        if fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) { ticks += user + system }
    }
    return Double(ticks) / ticksPerSecond
}
