import DBus

/// A simulated bluetoothd 5.66: serves `org.bluez` on a D-Bus bus with the
/// adapters and peripherals of a scenario.
///
/// ```swift
/// let daemon = try BusDaemon()
/// let connection = try await Connection.connect(to: .address(daemon.address))
/// let sim = try await SimulatedBlueZ.start(on: connection, scenario: .default)
/// // ... clients talk to org.bluez on daemon.address ...
/// await sim.stop()
/// ```
///
/// The control API (`addDevice`, `setRSSI`, `notify`, `restart`, ...) lets
/// tests change the world while clients watch through D-Bus.
public final class SimulatedBlueZ: Sendable {
    let core: SimulatorCore
    /// The connection the simulator serves on.
    public let connection: Connection
    /// Whether `stop()` closes the connection (it opened it).
    private let ownsConnection: Bool

    private init(core: SimulatorCore, connection: Connection, ownsConnection: Bool) {
        self.core = core
        self.connection = connection
        self.ownsConnection = ownsConnection
    }

    /// Serves `scenario` on an open connection: exports the objects, then
    /// takes the name `org.bluez`.
    ///
    /// Throws if the name is already owned on the bus.
    public static func start(
        on connection: Connection, scenario: Scenario = .default, options: SimulatorOptions = SimulatorOptions()
    ) async throws -> SimulatedBlueZ {
        let core = SimulatorCore(bus: connection, scenario: scenario, options: options)
        try await core.start()
        return SimulatedBlueZ(core: core, connection: connection, ownsConnection: false)
    }

    /// Connects to the bus at `address` and serves `scenario` there; `stop`
    /// closes the connection.
    public static func start(
        address: String, scenario: Scenario = .default, options: SimulatorOptions = SimulatorOptions()
    ) async throws -> SimulatedBlueZ {
        let connection = try await Connection.connect(to: .address(address))
        do {
            let core = SimulatorCore(bus: connection, scenario: scenario, options: options)
            try await core.start()
            return SimulatedBlueZ(core: core, connection: connection, ownsConnection: true)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Releases `org.bluez`, removes every object and stops the clock.
    public func stop() async {
        await core.stop()
        if ownsConnection { connection.close() }
    }

    /// What the simulator has done so far.
    public var statistics: SimulatorStatistics {
        get async { await core.counters }
    }
}
