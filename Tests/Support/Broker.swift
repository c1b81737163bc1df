import Foundation
import Glibc
import Synchronization

/// A private mosquitto broker for one test: its own directory and config,
/// a free loopback port, logging to standard error (unbuffered, unlike its
/// standard output) (which tests read to
/// know when a subscription is in place). `restart()` starts it again on the
/// same port; with `persistent`, sessions and queued messages survive that.
public final class Broker: Sendable {
    public let directory: String
    public let port: Int
    public let configuration: String
    private let process: Mutex<ChildProcess?>

    /// Extra lines go in the listener's section of the config (TLS, auth).
    public static func start(persistent: Bool = false, listenerLines: [String] = [], files: [String: String] = [:])
        async throws -> Broker
    {
        let directory = try makeTemporaryDirectory()
        for (name, contents) in files {
            try contents.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try freePort()
            var lines = [
                "per_listener_settings false",
                "log_dest stderr",
                "log_type all",
                "connection_messages true",
                "log_timestamp false",
                "persistence \(persistent)",
                "persistence_location \(directory)/",
                "autosave_interval 0",
                // The broker's own limits must not be what a test measures.
                "max_queued_messages 100000",
                "max_inflight_messages 20",
            ]
            if getuid() == 0 { lines.append("user root") }
            if !listenerLines.contains(where: { $0.hasPrefix("allow_anonymous") }) {
                lines.append("allow_anonymous true")
            }
            lines.append("listener \(port) 127.0.0.1")
            lines += listenerLines.map { $0.replacingOccurrences(of: "$DIR", with: directory) }
            let configuration = lines.joined(separator: "\n") + "\n"
            let broker = Broker(directory: directory, port: port, configuration: configuration)
            do {
                try await broker.launch()
                return broker
            } catch {
                lastError = error
            }
        }
        throw lastError ?? BrokerError("no broker")
    }

    private init(directory: String, port: Int, configuration: String) {
        self.directory = directory
        self.port = port
        self.configuration = configuration
        process = Mutex(nil)
    }

    deinit {
        process.withLock { $0?.kill() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var url: String { "mqtt://127.0.0.1:\(port)" }
    /// What the broker has logged since it was last started.
    public var log: String { process.withLock { $0?.standardError ?? "" } }

    private func launch() async throws {
        let path = "\(directory)/mosquitto.conf"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        let child = try ChildProcess(["mosquitto", "-c", path])
        process.withLock { $0 = child }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            // "running" follows the listeners' successful bind.
            if child.standardError.contains(" running\n"), canConnect(port) { return }
            if child.standardError.contains("Error") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        child.kill()
        throw BrokerError("mosquitto did not start on port \(port): \(child.standardOutput) \(child.standardError)")
    }

    /// Stops the broker: SIGTERM (it saves its persistence file), then waits
    /// for it to exit.
    public func stop() async {
        guard let child = process.withLock({ $0 }) else { return }
        child.signal(SIGTERM)
        _ = await child.wait(timeout: .seconds(30))
        child.kill()
    }

    /// Starts it again on the same port with the same config.
    public func restart() async throws {
        await stop()
        try await launch()
    }

    /// Waits until the broker's log shows `client` subscribed to `filter`.
    public func waitForSubscription(client: String, filter: String, timeout: Duration = .seconds(30)) async -> Bool {
        await waitForLog { $0.contains("\(client) 0 \(filter)\n") || $0.contains("\(client) 1 \(filter)\n") || $0.contains("\(client) 2 \(filter)\n") }
    }

    /// Waits until the log satisfies `condition`.
    public func waitForLog(timeout: Duration = .seconds(30), _ condition: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(log) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(log)
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public func makeTemporaryDirectory() throws -> String {
    var template = Array("\(NSTemporaryDirectory())/mqtt-test-XXXXXX".utf8CString)
    guard let pointer = mkdtemp(&template) else { throw BrokerError("mkdtemp failed") }
    let path = String(cString: pointer)
    chmod(path, 0o755)
    return path
}

/// A loopback TCP port nobody listens on, below the kernel's ephemeral
/// range (32768 and up): servers of other tests that bind port 0 get
/// ephemeral ports, so they cannot take a broker's port while it restarts.
public func freePort() throws -> Int {
    for _ in 0..<100 {
        let port = Int.random(in: 20_000..<32_000)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return port }
    }
    throw BrokerError("no free port between 20000 and 32000")
}

/// True when a TCP connection to the loopback port succeeds.
public func canConnect(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
