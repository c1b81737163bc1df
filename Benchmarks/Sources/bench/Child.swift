import Glibc

/// A child process of the runner: started with posix_spawn (through
/// `taskset` when pinned to a core, which execs the program, so the pid is
/// the program's), its standard input a pipe, its standard output read line
/// by line with timeouts, its standard error appended to a log file.
final class Child {
    let name: String
    let pid: pid_t
    private var input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var outputEnded = false
    private(set) var exitStatus: Int32?

    /// Starts `arguments` (a path and its arguments), pinned to `cpu` if given.
    init(_ name: String, _ arguments: [String], cpu: Int?, log: String, environment: [String: String] = [:]) throws {
        self.name = name
        var command = arguments
        if let cpu { command = ["/usr/bin/taskset", "-c", String(cpu)] + command }
        var inputPipe: [Int32] = [0, 0]
        var outputPipe: [Int32] = [0, 0]
        guard pipe(&inputPipe) == 0, pipe(&outputPipe) == 0 else { throw BenchError("pipe failed: errno \(errno)") }
        // Close-on-exec, so that no other child inherits these ends (a
        // child holding another's stdin open would keep it from ending).
        for fd in inputPipe + outputPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let logFD = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard logFD >= 0 else { throw BenchError("cannot open \(log): errno \(errno)") }
        defer { close(logFD) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, logFD, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so that stopping it reaches what it starts.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var merged: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            index += 1
        }
        for (key, value) in environment { merged[key] = value }
        var cArguments: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, &attributes, &cArguments, &cEnvironment)
        close(inputPipe[0])
        close(outputPipe[1])
        guard result == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            throw BenchError("cannot start \(command[0]): error \(result)")
        }
        self.pid = pid
        self.input = inputPipe[1]
        self.output = outputPipe[0]
    }

    deinit {
        if exitStatus == nil { stop() }
        if input >= 0 { close(input) }
        close(output)
    }

    /// The next line of standard output, or nil at its end or after `timeout` seconds.
    func readLine(timeout: Double) -> String? {
        let deadline = Clock.seconds() + timeout
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if outputEnded { return nil }
            let remaining = deadline - Clock.seconds()
            guard remaining > 0 else { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(min(remaining * 1000, 1000) + 1)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count <= 0 {
                outputEnded = true
            } else {
                buffer += chunk[0..<count]
            }
        }
    }

    /// Lines until one satisfies `predicate` (returned), or nil.
    func readLine(timeout: Double, where predicate: (String) -> Bool) -> String? {
        let deadline = Clock.seconds() + timeout
        while let line = readLine(timeout: max(0, deadline - Clock.seconds())) {
            if predicate(line) { return line }
        }
        return nil
    }

    /// Every remaining line of output (until the child closes it or `timeout`).
    func readRest(timeout: Double) -> [String] {
        var lines: [String] = []
        let deadline = Clock.seconds() + timeout
        while let line = readLine(timeout: max(0, deadline - Clock.seconds())) { lines.append(line) }
        if !buffer.isEmpty {
            lines.append(String(decoding: buffer, as: UTF8.self))
            buffer = []
        }
        return lines
    }

    /// The first line of output that is a JSON object, parsed (the tools
    /// print their result as one; with `--linger 1` they then wait for
    /// their input to end, so that their CPU time can still be read).
    func resultJSON(timeout: Double) throws -> [String: Any] {
        var seen: [String] = []
        let line = readLine(timeout: timeout) { line in
            seen.append(line)
            return line.hasPrefix("{")
        }
        guard let line, let object = JSONValue.parseObject(line) else {
            throw BenchError("\(name) gave no result (output: \(seen.suffix(3).joined(separator: " | ")))")
        }
        return object
    }

    /// Lets a lingering tool exit and reaps it.
    func finish() {
        closeInput()
        wait(timeout: 15)
    }

    func send(_ line: String) {
        guard input >= 0 else { return }
        var text = line + "\n"
        text.withUTF8 { bytes in _ = write(input, bytes.baseAddress, bytes.count) }
    }

    /// Closes its standard input (some tools stop on that).
    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Waits up to `timeout` seconds for it to exit.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        if exitStatus != nil { return true }
        let deadline = Clock.seconds() + timeout
        while true {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exitStatus = status
                return true
            }
            // Checked before sleeping: `isRunning` (a timeout of 0) must
            // not sleep, or a loop polling with it polls 2 ms apart at best
            // (the start-up phase's did: its figures came in steps of 3 ms).
            guard Clock.seconds() < deadline else { return false }
            usleep(2000)
        }
    }

    /// SIGTERM, then SIGKILL to its process group after `grace` seconds.
    func stop(grace: Double = 5) {
        guard exitStatus == nil else { return }
        kill(pid, SIGTERM)
        if !wait(timeout: grace) {
            kill(-pid, SIGKILL)
            _ = wait(timeout: 2)
        }
    }

    var isRunning: Bool { !wait(timeout: 0) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Clock {
    /// CLOCK_MONOTONIC in seconds.
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        nanosleep(&pause, nil)
    }
}
