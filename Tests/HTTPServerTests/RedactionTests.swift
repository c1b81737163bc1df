import Foundation
import HTTPServer
import Logging
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// Secrets in a request target never reach the log, at any level.
    @Suite struct Redaction {
        @Test func accessTokenIsRedactedInEveryLogLine() async throws {
            let records = LogRecords()
            var logger = Logger(label: "test.http.redaction") { _ in CapturingLogHandler(records: records) }
            logger.logLevel = .trace
            let server = Server(
                configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: FailingOnPath(), logger: logger)
            try server.start()
            let port = try #require(server.port)
            let statuses = try await blocking {
                let client = try RawClient(port: port)
                try client.request("GET", "/ok?access_token=SECRET1&x=1", headers: ["Authorization: Bearer SECRET2"])
                let first = try client.readResponse().head.status
                try client.request("GET", "/fails?ACCESS_TOKEN=SECRET3")
                let second = try client.readResponse().head.status
                try client.request("GET", "/ok?access%5Ftoken=SECRET4")
                let third = try client.readResponse().head.status
                try client.request("GET", "/fails?access_token%3DSECRET5")
                let fourth = try client.readResponse().head.status
                try client.request("GET", "/ok?access_token[]=SECRET6")
                return [first, second, third, fourth, try client.readResponse().head.status]
            }
            #expect(statuses == [200, 500, 200, 500, 200])
            #expect(await eventually { records.all.filter { $0.contains("request finished") }.count == 5 })
            await server.stop()
            let lines = records.all
            #expect(lines.contains { $0.contains("/ok?access_token=REDACTED&x=1") })
            #expect(lines.contains { $0.contains("handler failed") && $0.contains("ACCESS_TOKEN=REDACTED") })
            #expect(!lines.contains { $0.contains("SECRET") }, "\(lines.filter { $0.contains("SECRET") })")
        }
    }
}

/// Answers 200, except on `/fails`, where it throws an error the server
/// logs (a Router would turn it into a response itself).
struct FailingOnPath: Responder {
    struct Failure: Error {}

    func respond(to request: Request) async throws -> Response {
        if request.path == "/fails" { throw Failure() }
        return .text("ok\n")
    }
}

/// Every log line a `CapturingLogHandler` saw, message and metadata.
final class LogRecords: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

/// A swift-log handler that keeps every line in memory.
struct CapturingLogHandler: LogHandler {
    let records: LogRecords
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        records.append("\(event.level) \(event.message) \(fields)")
    }
}
