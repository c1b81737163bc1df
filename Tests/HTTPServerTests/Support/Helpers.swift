import Foundation
import HTTPServer
import Logging
import Synchronization
import Testing

/// Runs blocking work (sockets, subprocesses) on a thread of its own, so it
/// never occupies the cooperative pool the server's handlers need.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

struct ProcessResult: Sendable {
    var status: Int32
    var output: String
    var error: String
}

/// Runs a program to completion and captures its output.
func run(_ executable: String, _ arguments: [String]) async throws -> ProcessResult {
    try await blocking {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("httpserver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out"), errURL = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return ProcessResult(
            status: process.terminationStatus,
            output: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            error: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

func curl(_ arguments: [String]) async throws -> ProcessResult {
    try await run("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "20"] + arguments)
}

/// A logger for servers under test: warnings and worse only, unless
/// HTTPSERVER_TEST_LOG=debug.
func testLogger() -> Logger {
    var logger = Logger(label: "test.http")
    logger.logLevel = ProcessInfo.processInfo.environment["HTTPSERVER_TEST_LOG"] == "debug" ? .debug : .warning
    return logger
}

/// Starts a server on 127.0.0.1 with a free port, runs `body`, and stops
/// the server however `body` ends.
func withServer<T>(
    _ responder: some Responder,
    configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
    _ body: (Server, Int) async throws -> T
) async throws -> T {
    // Clients here write to sockets the server may have closed.
    signal(SIGPIPE, SIG_IGN)
    let server = Server(configuration: configuration, responder: responder, logger: testLogger())
    try server.start()
    let port = try #require(server.port)
    do {
        let result = try await body(server, port)
        await server.stop(gracePeriod: .seconds(2))
        return result
    } catch {
        await server.stop(gracePeriod: .seconds(2))
        throw error
    }
}

/// Sends `head` as it is on a new connection to a server with `router`
/// and `configuration`, and reads the one response.
func sendRaw(
    _ head: String, to router: Router, configuration: ServerConfiguration
) async throws -> RawClient.Message {
    try await withServer(router, configuration: configuration) { _, port in
        try await blocking {
            let client = try RawClient(port: port)
            try client.send(head)
            return try client.readResponse()
        }
    }
}

/// Writers registered by stream handlers, and how their streams ended.
final class StreamHub: Sendable {
    let writers = Mutex<[StreamWriter]>([])
    let ends = Mutex<[StreamEnd]>([])

    var count: Int { writers.withLock { $0.count } }
    var endCount: Int { ends.withLock { $0.count } }
    var allEnds: [StreamEnd] { ends.withLock { $0 } }
    func writer(_ index: Int) -> StreamWriter { writers.withLock { $0[index] } }

    /// A handler that opens an event stream registered here.
    func handler(_ configuration: StreamConfiguration = StreamConfiguration()) -> Handler {
        { [self] _ in
            let writer = StreamWriter(configuration: configuration) { [self] end in
                ends.withLock { $0.append(end) }
            }
            writers.withLock { $0.append(writer) }
            return .eventStream(writer)
        }
    }
}

/// Raises the open-file limit to the hard limit (for tests that open
/// thousands of sockets in this one process).
func raiseFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < rlim_t(wanted) {
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(limit.rlim_cur)
}

/// Resident memory of this process, in KiB.
func residentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
}

/// A counter shared between handlers and the test.
final class Counter: Sendable {
    private let value = Atomic(0)
    private let peakValue = Atomic(0)

    var count: Int { value.load(ordering: .sequentiallyConsistent) }
    var peak: Int { peakValue.load(ordering: .sequentiallyConsistent) }

    @discardableResult
    func increment() -> Int {
        let now = value.add(1, ordering: .sequentiallyConsistent).newValue
        _ = peakValue.max(now, ordering: .sequentiallyConsistent)
        return now
    }

    func decrement() { value.subtract(1, ordering: .sequentiallyConsistent) }
}

/// A logger for tests that provoke errors on purpose.
func quietLogger() -> Logger {
    var logger = Logger(label: "test.http.quiet")
    logger.logLevel = .critical
    return logger
}
