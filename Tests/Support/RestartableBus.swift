import DBus
import Glibc
import Synchronization

/// A private `dbus-daemon` that a test can kill and start again at the same
/// address, as when the machine's dbus-daemon is restarted. The address
/// carries no `guid` (as the system bus's does not), so that clients can
/// reconnect to the new daemon.
public final class RestartableBus: Sendable {
    /// `unix:path=DIR/bus`.
    public let address: String
    public let directory: String
    private let process: Mutex<ChildProcess?>

    public init() async throws {
        var template = Array("/tmp/blegateway-faults-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress.unsafelyUnwrapped) }) else {
            throw ChildProcessError("mkdtemp failed: errno \(errno)")
        }
        directory = String(cString: created)
        address = "unix:path=\(directory)/bus"
        let configuration = BusDaemon.configuration(listen: address)
        let fd = open(directory + "/bus.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ChildProcessError("cannot write bus.conf: errno \(errno)") }
        let bytes = Array(configuration.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        process = Mutex(nil)
        try await start()
    }

    deinit {
        kill()
        unlink(directory + "/bus.conf")
        rmdir(directory)
    }

    /// Starts the daemon (again) and waits until it accepts connections.
    public func start() async throws {
        unlink(directory + "/bus")
        let daemon = try ChildProcess([
            "dbus-daemon", "--nofork", "--config-file=\(directory)/bus.conf", "--print-address=1",
        ])
        process.withLock { $0 = daemon }
        guard await daemon.waitForOutput(containing: "unix:", timeout: .seconds(20)) else { throw ChildProcessError("dbus-daemon did not start: \(daemon.standardError)") }
    }

    /// Kills the daemon at once (SIGKILL): every client's connection drops.
    public func kill() {
        let daemon = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        daemon?.kill()
        unlink(directory + "/bus")
    }
}
