import CDBus
import Glibc
import Synchronization

/// A private `dbus-daemon` in a temporary directory: a real message bus that
/// belongs to one test or one simulated gateway, never the machine's system
/// or session bus.
///
/// The daemon runs under a small shell that kills it when its standard input
/// closes, so it goes away with this process even if the process crashes.
public final class BusDaemon: Sendable {
    /// The bus address to connect to (`unix:path=…,guid=…`).
    public let address: String
    /// The directory holding the configuration and the socket.
    public let directory: String
    private let shellPID: pid_t
    private let lifeline: Int32
    /// Set by the first `stop()`: the lifeline descriptor number must be
    /// closed only once, as it may be reused by anything afterwards.
    private let stopped = Atomic(false)

    /// A private bus's configuration file: anyone may own any name, send
    /// anything and eavesdrop; `limits` are dbus-daemon `<limit>`s by name.
    public static func configuration(listen address: String, limits: [String: Int] = [:]) -> String {
        let limitLines = limits.sorted { $0.key < $1.key }.map { "  <limit name=\"\($0.key)\">\($0.value)</limit>\n" }
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
              </policy>

            """ + limitLines.joined() + "</busconfig>\n"
    }

    /// Starts a daemon and waits until it accepts connections.
    ///
    /// - Parameter maxRepliesPerConnection: the limit on pending replies per
    ///   connection; 128 by default, as on the system bus.
    public init(maxRepliesPerConnection: Int = 128) throws(DBusError) {
        var template = Array("/tmp/blegateway-bus-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress.unsafelyUnwrapped) }) else {
            throw DBusError(.failed, "mkdtemp failed: errno \(errno)")
        }
        directory = String(cString: created)
        let configuration = Self.configuration(
            listen: "unix:path=\(directory)/bus",
            limits: ["max_replies_per_connection": maxRepliesPerConnection, "reply_timeout": 300000])
        try Self.write(configuration, to: directory + "/bus.conf")

        let script = """
            dbus-daemon --nofork --config-file="$1" --print-address=1 2>/dev/null &
            daemon=$!
            cat >/dev/null
            kill "$daemon" 2>/dev/null
            wait "$daemon"
            """
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard cdbus_pipe_cloexec(&input) == 0, cdbus_pipe_cloexec(&output) == 0 else {
            throw DBusError(.failed, "pipe failed: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        guard cdbus_spawn_clean_child(&actions, &attributes) == 0 else {
            throw DBusError(.failed, "posix_spawn setup failed: errno \(errno)")
        }
        let arguments = ["/bin/sh", "-c", script, "sh", directory + "/bus.conf"]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &cArguments, environ)
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1])
            close(output[0])
            throw DBusError(.failed, "could not start /bin/sh: error \(spawned)")
        }
        shellPID = pid
        lifeline = input[1]
        defer { close(output[0]) }
        guard let line = Self.readLine(output[0], timeoutMilliseconds: 10_000), line.hasPrefix("unix:") else {
            close(lifeline)
            Self.reap(pid)
            throw DBusError(.failed, "dbus-daemon did not start (is the dbus-daemon package installed?)")
        }
        address = line
    }

    deinit {
        stop()
    }

    /// Stops the daemon and removes its directory.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(lifeline)
        Self.reap(shellPID)
        unlink(directory + "/bus.conf")
        unlink(directory + "/bus")
        rmdir(directory)
    }

    /// Waits for the shell (which stops the daemon when its input closes);
    /// after two seconds, kills the whole process group.
    private static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        for _ in 0..<200 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    private static func write(_ text: String, to path: String) throws(DBusError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DBusError(.failed, "cannot write \(path): errno \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw DBusError(.failed, "cannot write \(path): errno \(errno)")
        }
    }

    private static func readLine(_ fd: Int32, timeoutMilliseconds: Int32) -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while !bytes.contains(0x0A) {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeoutMilliseconds) > 0 else { return nil }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}
