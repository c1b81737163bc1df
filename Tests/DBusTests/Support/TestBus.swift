import DBus
import Foundation

/// A private dbus-daemon for one test, and connections to it.
final class TestBus: Sendable {
    let daemon: BusDaemon

    init() throws {
        daemon = try BusDaemon()
    }

    func connect(maxPendingCalls: Int = 100) async throws -> Connection {
        try await Connection.connect(to: .address(daemon.address), maxPendingCalls: maxPendingCalls)
    }

    /// The number of match rules the bus holds for a connection.
    func matchRules(of connection: Connection, asking observer: Connection) async throws -> UInt32 {
        let reply = try await observer.call(
            destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
            method: "GetConnectionStats", arguments: [.string(connection.uniqueName.rawValue)])
        return reply.first?.vardict?["MatchRules"]?.uint32 ?? 0
    }
}

/// Runs a command-line program to completion and returns its status and
/// output.
func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // Read before waiting so a large output cannot fill the pipe and block.
    let errorHandle = error.fileHandleForReading
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errorHandle.readDataToEndOfFile()
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outputData, as: UTF8.self),
        String(decoding: errorData, as: UTF8.self)
    )
}

/// A program left running in the background whose output is read later.
final class BackgroundProcess: @unchecked Sendable {
    // Safe to share because: the Process is configured before `run()` and
    // afterwards only terminated and waited for; the collected output is
    // guarded by `lock`.
    private let process = Process()
    private let lock = NSLock()
    private var collected = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock()
            self.collected.append(data)
            self.lock.unlock()
        }
        try process.run()
    }

    var output: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Waits until the output contains `text` or the time runs out.
    func waitForOutput(containing text: String, timeout: TimeInterval = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return output.contains(text)
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Open file descriptors and threads of this process.
func processResources() -> (fds: Int, threads: Int) {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    return (fds, threads)
}
