import CDBus
import Glibc
import Synchronization

/// A program run by a test: started clean (empty signal mask, no inherited
/// descriptors, its own process group), its output collected by a thread of
/// its own, and killed with its group when the test lets go of it.
///
/// Foundation's `Process` is not used: on Linux its children inherit the
/// test thread's blocked signals (so they ignore SIGTERM) and its
/// `waitUntilExit` can block forever.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let input: Int32
    private let output = OutputBuffer()
    private let errorOutput = OutputBuffer()
    private let exitStatus = Mutex<Int32?>(nil)
    private let reaped = Atomic(false)

    /// Starts `arguments[0]` (looked up in PATH) with the environment of this
    /// process plus `environment`.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var stdinPipe: [Int32] = [0, 0]
        var stdoutPipe: [Int32] = [0, 0]
        var stderrPipe: [Int32] = [0, 0]
        guard cdbus_pipe_cloexec(&stdinPipe) == 0, cdbus_pipe_cloexec(&stdoutPipe) == 0,
            cdbus_pipe_cloexec(&stderrPipe) == 0
        else { throw ChildProcessError("pipe failed: errno \(errno)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        guard cdbus_spawn_clean_child(&actions, &attributes) == 0 else {
            throw ChildProcessError("posix_spawn setup failed")
        }

        var variables: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        variables.merge(environment) { _, new in new }
        var cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer {
            for pointer in cEnvironment { free(pointer) }
            for pointer in cArguments { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, &cArguments, &cEnvironment)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            throw ChildProcessError("cannot start \(arguments[0]): error \(result)")
        }
        self.pid = pid
        self.input = stdinPipe[1]
        Self.drain(stdoutPipe[0], into: output)
        Self.drain(stderrPipe[0], into: errorOutput)
    }

    deinit {
        kill()
        close(input)
    }

    /// What the program wrote to standard output so far.
    public var standardOutput: String { output.text }
    /// The same, as bytes (for binary output).
    public var standardOutputBytes: [UInt8] { output.bytesSoFar }
    /// What the program wrote to standard error so far.
    public var standardError: String { errorOutput.text }

    /// Writes to the program's standard input.
    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
    }

    /// Waits until standard output contains `text`, or the time runs out.
    public func waitForOutput(containing text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if standardOutput.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return standardOutput.contains(text)
    }

    /// Waits for the program to exit and its output to be read to the end,
    /// and returns its exit status (128 + the signal number if a signal
    /// ended it), or nil after `timeout`.
    public func wait(timeout: Duration = .seconds(60)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = poll(), output.isFinished, errorOutput.isFinished { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return poll()
    }

    /// Sends a signal to the program alone.
    public func signal(_ number: Int32) {
        if !reaped.load(ordering: .acquiring) { Glibc.kill(pid, number) }
    }

    /// Kills the program's whole process group and reaps it.
    public func kill() {
        guard !reaped.load(ordering: .acquiring) else { return }
        Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        if waitpid(pid, &status, 0) == pid { record(status) }
    }

    private func poll() -> Int32? {
        if let status = exitStatus.withLock({ $0 }) { return status }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        record(status)
        return exitStatus.withLock { $0 }
    }

    private func record(_ status: Int32) {
        reaped.store(true, ordering: .releasing)
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus.withLock { $0 = code }
    }

    /// Reads `fd` to its end on a thread of its own (never on Swift's
    /// cooperative pool, which a blocking read could starve), then closes it.
    private static func drain(_ fd: Int32, into buffer: OutputBuffer) {
        let context = Unmanaged.passRetained(DrainJob(fd: fd, buffer: buffer)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let job = Unmanaged<DrainJob>.fromOpaque(context).takeRetainedValue()
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(job.fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                job.buffer.append(chunk[0..<count])
            }
            close(job.fd)
            job.buffer.finish()
            return nil
        }, context)
        pthread_detach(thread)
    }
}

/// Bytes a program wrote, shared with the thread that reads them.
private final class OutputBuffer: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let finished = Atomic(false)
    func append(_ chunk: ArraySlice<UInt8>) { bytes.withLock { $0 += chunk } }
    /// The pipe reached its end: everything written has been read.
    func finish() { finished.store(true, ordering: .releasing) }
    var isFinished: Bool { finished.load(ordering: .acquiring) }
    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
    var bytesSoFar: [UInt8] { bytes.withLock { $0 } }
}

/// One pipe to drain.
private final class DrainJob: Sendable {
    let fd: Int32
    let buffer: OutputBuffer
    init(fd: Int32, buffer: OutputBuffer) {
        self.fd = fd
        self.buffer = buffer
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a program to completion and returns its exit status and output.
public func run(
    _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)
) async throws -> (status: Int32, output: String, error: String) {
    let child = try ChildProcess(arguments, environment: environment)
    let status = await child.wait(timeout: timeout)
    child.kill()
    return (status ?? -1, child.standardOutput, child.standardError)
}
