import DBus

/// A private dbus-daemon for one test, and connections to it.
public final class TestBus: Sendable {
    public let daemon: BusDaemon

    public init() throws {
        daemon = try BusDaemon()
    }

    public var address: String { daemon.address }

    public func connect(maxPendingCalls: Int = 100) async throws -> Connection {
        try await Connection.connect(to: .address(daemon.address), maxPendingCalls: maxPendingCalls)
    }

    /// The number of match rules the bus holds for a connection (from the
    /// daemon's statistics interface).
    public func matchRules(of connection: Connection, asking observer: Connection) async throws -> UInt32 {
        let reply = try await observer.call(
            destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
            method: "GetConnectionStats", arguments: [.string(connection.uniqueName.rawValue)])
        return reply.first?.vardict?["MatchRules"]?.uint32 ?? 0
    }
}
