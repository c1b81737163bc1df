import Metrics
import Synchronization

/// Keeps a connection to a bus open: when the bus drops it (dbus-daemon
/// stopped or restarted), connects again with a bounded exponential
/// backoff, and reports each step to its owner, who re-subscribes and
/// re-reads what it needs on the new connection.
///
/// ```swift
/// let supervisor = BusSupervisor(address: .system, connection: try await Connection.connect(to: .system))
/// await supervisor.run { event in
///     if case .reconnected(let connection, _) = event { /* subscribe again on `connection` */ }
/// }
/// ```
public final class BusSupervisor: Sendable {
    /// How long to wait between attempts: `initial`, doubled after each
    /// failure, never more than `maximum`. Attempts go on until `run` is
    /// cancelled.
    public struct Backoff: Sendable, Hashable {
        public var initial: Duration
        public var maximum: Duration

        public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
            self.initial = initial
            self.maximum = maximum
        }

        /// The pause before attempt `attempt` (1 for the first retry).
        public func delay(beforeAttempt attempt: Int) -> Duration {
            var delay = initial
            for _ in 1..<max(1, attempt) {
                delay = delay * 2
                if delay >= maximum { return maximum }
            }
            return min(delay, maximum)
        }
    }

    /// What happened to the supervised connection.
    public enum Event: Sendable {
        /// The connection ended without being closed by its owner.
        case disconnected(DBusError)
        /// Attempt `attempt` to connect failed; the next comes after `retryIn`.
        case reconnectFailed(attempt: Int, error: DBusError, retryIn: Duration)
        /// A new connection is open (after `attempts` attempts).
        case reconnected(Connection, attempts: Int)
    }

    public let address: BusAddress
    public let backoff: Backoff
    private let current: Mutex<Connection>
    /// `blegateway_dbus_reconnect_attempts_total`: every try at a new
    /// connection; made with the supervisor, so it reads 0 before the first.
    private let reconnectAttempts = Counter(label: "blegateway_dbus_reconnect_attempts_total")

    /// Supervises `connection`, an open connection to `address`. Its
    /// replacements are set up with its configuration
    /// (`Connection.configuration`: the pending-call limit, the end-of-turn
    /// work).
    public init(address: BusAddress, connection: Connection, backoff: Backoff = Backoff()) {
        self.address = address
        self.backoff = backoff
        self.current = Mutex(connection)
    }

    /// The connection in use now (it may have ended; a new one follows).
    public var connection: Connection { current.withLock { $0 } }

    /// Watches the connection and replaces it whenever the bus drops it,
    /// calling `report` for each step (in order, one at a time: the next
    /// step waits for `report` to return). When `report` throws for
    /// `.reconnected` (the owner could not set itself up on the new
    /// connection), that connection is closed and the attempt counts as
    /// failed. Returns when the task is cancelled, or when the owner closed
    /// the connection; the connection in use then stays as it is for its
    /// owner to close.
    public func run(_ report: @Sendable (Event) async throws -> Void) async {
        while !Task.isCancelled {
            let connection = self.connection
            let reason = await connection.waitUntilClosed()
            guard !Task.isCancelled else { return }
            guard connection.wasDroppedByBus else { return }  // its owner closed it
            try? await report(.disconnected(reason))
            let configuration = connection.configuration
            var attempt = 1
            while true {
                reconnectAttempts.increment()
                var replacement: Connection?
                do {
                    let connection = try await Connection.connect(to: address, configuration: configuration)
                    replacement = connection
                    if Task.isCancelled {
                        connection.close()
                        return
                    }
                    current.withLock { $0 = connection }
                    try await report(.reconnected(connection, attempts: attempt))
                    break
                } catch {
                    replacement?.close()
                    let delay = backoff.delay(beforeAttempt: attempt)
                    let failure = error as? DBusError ?? DBusError(.failed, "\(error)")
                    try? await report(.reconnectFailed(attempt: attempt, error: failure, retryIn: delay))
                    do { try await Task.sleep(for: delay) } catch { return }
                    attempt += 1
                }
            }
        }
    }
}
