import AsyncPrimitives
import CMicroHTTPD
import Glibc
import Synchronization

/// Counts open connections (in all, and per client address), decides which
/// ones are answered 503 instead of being served, and closes connections
/// that take too long to send a request head or body.
///
/// libmicrohttpd stops accepting once its own connection limit is reached,
/// so a client past it waits in the listen backlog with no answer. The
/// daemon is therefore given a few more slots than `connectionLimit`: a
/// connection that lands in one of them, or that would take its address
/// past `maxConnectionsPerClient`, is served a 503 (with `Connection:
/// close`) for its first request instead, and gets at most two seconds to
/// send it.
///
/// libmicrohttpd's own timeout is an idle timeout, which a client sending a
/// byte at a time never reaches, and it must not apply to open streams. So
/// each connection gets a deadline for its request head: from its accept,
/// and again from the end of each response on a kept-alive connection; the
/// head arriving (the first call of the access handler) clears it. A
/// thread sleeps until the earliest deadline and shuts down the sockets
/// whose deadline passed; libmicrohttpd then sees the end of the stream and
/// closes the connection. Streams and running handlers have no deadline.
final class ConnectionGuard: Sendable {
    private final class Record: Sendable {
        let socket: Int32
        let address: String
        /// Why this connection's requests are answered 503; nil to serve.
        let refusal: String?

        init(socket: Int32, address: String, refusal: String?) {
            self.socket = socket
            self.address = address
            self.refusal = refusal
        }
    }

    private struct State {
        /// Open connections by their `MHD_Connection *`; an entry is removed
        /// (under the lock) before libmicrohttpd closes the socket, so a
        /// socket found here is still this connection's.
        var records: [Int: Record] = [:]
        var perAddress: [String: Int] = [:]
        var deadlines: [Int: ContinuousClock.Instant] = [:]
        /// The deadline the thread sleeps until (nil: until woken, or not
        /// started). A later deadline needs no wake-up: the thread sees it
        /// when it wakes.
        var threadWake: ContinuousClock.Instant?
        var stopped = false

        /// Whether a new deadline at `deadline` must wake (or start) the thread.
        func needsWake(for deadline: ContinuousClock.Instant) -> Bool {
            guard let threadWake else { return true }
            return deadline < threadWake
        }
    }

    private let connectionLimit: Int
    private let perClientLimit: Int
    private let headerTimeout: Duration
    private let state = Mutex(State())
    private let thread = WakeableThread()

    init(configuration: ServerConfiguration) {
        connectionLimit = max(1, configuration.connectionLimit)
        perClientLimit = configuration.maxConnectionsPerClient
        headerTimeout = configuration.requestHeaderTimeout
    }

    /// The slots libmicrohttpd is given beyond `connectionLimit`, in which
    /// clients are answered 503 rather than left waiting.
    static func reserve(for connectionLimit: Int) -> Int {
        min(64, max(8, connectionLimit / 16))
    }

    /// How long a connection that will be refused has to send its head.
    static let refusedHeadTimeout = Duration.seconds(2)

    /// MHD_CONNECTION_NOTIFY_STARTED; polling thread.
    func started(_ connection: OpaquePointer) {
        let socket = cmhd_connection_socket(connection)
        let address = cmhd_connection_client_address(connection).flatMap { SocketAddress($0) }?.host ?? "?"
        let now = ContinuousClock.now
        let wake = state.withLock { state -> Bool in
            let held = state.perAddress[address, default: 0] + 1
            state.perAddress[address] = held
            let refusal: String? =
                if state.records.count >= connectionLimit {
                    "the server is at its limit of \(connectionLimit) connections"
                } else if perClientLimit > 0 && held > perClientLimit {
                    "this client already holds \(perClientLimit) connections, the most allowed"
                } else {
                    nil
                }
            let key = Int(bitPattern: UnsafeRawPointer(connection))
            state.records[key] = Record(socket: socket, address: address, refusal: refusal)
            guard headerTimeout > .zero, !state.stopped else { return false }
            // A refused connection needs only to send one head to get its
            // 503: it gets less time, so idle sockets cannot keep the
            // reserve full for long.
            let deadline = now + (refusal == nil ? headerTimeout : min(headerTimeout, Self.refusedHeadTimeout))
            state.deadlines[key] = deadline
            return state.needsWake(for: deadline)
        }
        if wake { startOrWake() }
    }

    /// MHD_CONNECTION_NOTIFY_CLOSED, before libmicrohttpd closes the socket;
    /// polling thread.
    func closed(_ connection: OpaquePointer) {
        let key = Int(bitPattern: UnsafeRawPointer(connection))
        state.withLock { state in
            state.deadlines[key] = nil
            guard let record = state.records.removeValue(forKey: key) else { return }
            let held = state.perAddress[record.address, default: 1] - 1
            state.perAddress[record.address] = held > 0 ? held : nil
        }
    }

    /// Why requests on this connection are refused, or nil to serve them.
    /// Called at the first access-handler call of each request: the head is
    /// in, so its deadline is cleared.
    func refusal(for control: ConnectionControl) -> String? {
        let key = Int(bitPattern: UnsafeRawPointer(control.connection.pointer))
        return state.withLock { state in
            state.deadlines[key] = nil
            return state.records[key]?.refusal
        }
    }

    /// A request on this connection is over: the next request's head must
    /// arrive within the header timeout. Polling thread.
    func requestCompleted(_ control: ConnectionControl) {
        guard headerTimeout > .zero else { return }
        let key = Int(bitPattern: UnsafeRawPointer(control.connection.pointer))
        let wake = state.withLock { state -> Bool in
            guard !state.stopped, state.records[key] != nil else { return false }
            let deadline = ContinuousClock.now + headerTimeout
            state.deadlines[key] = deadline
            return state.needsWake(for: deadline)
        }
        if wake { startOrWake() }
    }

    /// Sets (or with nil clears) the connection's deadline: used for the
    /// time a request body may take. Polling thread.
    func setDeadline(_ deadline: ContinuousClock.Instant?, for control: ConnectionControl) {
        let key = Int(bitPattern: UnsafeRawPointer(control.connection.pointer))
        let wake = state.withLock { state -> Bool in
            guard !state.stopped, state.records[key] != nil else { return false }
            state.deadlines[key] = deadline
            return deadline.map { state.needsWake(for: $0) } ?? false
        }
        if wake { startOrWake() }
    }

    /// Connections open now (as libmicrohttpd counts them).
    var openCount: Int { state.withLock { $0.records.count } }

    /// Ends the deadline thread (the server stopped).
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.deadlines = [:]
        }
        thread.stop()
    }

    private func startOrWake() {
        thread.startOrWake { [self] in run() }
    }

    /// Sleeps until the earliest deadline (or a change), then shuts down the
    /// sockets whose deadline passed.
    private func run() {
        var wakeup = pollfd(fd: thread.wakeFD, events: Int16(POLLIN), revents: 0)
        while !thread.isStopped {
            let now = ContinuousClock.now
            let earliest = state.withLock { state -> ContinuousClock.Instant? in
                for (key, deadline) in state.deadlines where deadline <= now {
                    state.deadlines[key] = nil
                    // Still open (the entry goes before the socket closes):
                    // libmicrohttpd sees the end of the stream and closes it.
                    if let record = state.records[key], record.socket >= 0 {
                        _ = shutdown(record.socket, Int32(SHUT_RDWR))
                    }
                }
                state.threadWake = state.deadlines.values.min()
                return state.threadWake
            }
            let timeout = earliest.map { Int32(clamping: max(1, ($0 - now).milliseconds + 1)) } ?? -1
            wakeup.revents = 0
            if poll(&wakeup, 1, timeout) > 0 { thread.drainWakeups() }
        }
    }
}
