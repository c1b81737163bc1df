import BlueZSimulator
import DBus
import Synchronization
import TestSupport

/// A private bus with the simulator serving a scenario on one connection
/// and a client connection for the test, as the gateway will use it.
final class SimulatorHarness: Sendable {
    let bus: TestBus
    let server: Connection
    let client: Connection
    let simulator: SimulatedBlueZ
    let signals: SignalRecorder

    static let adapter: ObjectPath = "/org/bluez/hci0"

    /// Starts on a fresh bus; `timing` scales the scenario's latencies.
    ///
    /// Devices are kept 3,000 s × `timing` after they were last seen (30 s
    /// at the default timing, as long as bluetoothd's own), not bluetoothd's
    /// 30 s scaled down: that would be shorter than some advertising
    /// intervals, and on a loaded machine (3 s was seen to be too short
    /// under a full `make test`) a device could expire between two looks at
    /// it. The expiry tests ask for short timeouts themselves.
    init(
        _ scenario: Scenario = TestScenarios.small, timing: Double = 0.01,
        options: SimulatorOptions = SimulatorOptions(temporaryTimeout: 3000), recording: Bool = true
    ) async throws {
        bus = try TestBus()
        server = try await bus.connect()
        client = try await bus.connect()
        // The recorder listens on a connection of its own, so that tests
        // measuring throughput can leave it out.
        signals = try await SignalRecorder(recording ? client : nil)
        var world = scenario
        world.timing = timing
        simulator = try await SimulatedBlueZ.start(on: server, scenario: world, options: options)
    }

    func close() async {
        await simulator.stop()
        signals.stop()
        client.close()
        server.close()
    }

    /// Calls org.bluez.
    @discardableResult
    func call(
        _ path: ObjectPath, _ interface: InterfaceName, _ method: MemberName, _ arguments: [Value] = [],
        on connection: Connection? = nil
    ) async throws -> [Value] {
        try await (connection ?? client).call(
            destination: "org.bluez", path: path, interface: interface, method: method, arguments: arguments,
            timeout: .seconds(20))
    }

    /// The D-Bus error a call fails with, or nil if it succeeds.
    func error(
        _ path: ObjectPath, _ interface: InterfaceName, _ method: MemberName, _ arguments: [Value] = [],
        on connection: Connection? = nil
    ) async -> DBusError? {
        do {
            try await call(path, interface, method, arguments, on: connection)
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            return DBusError(.failed, "\(error)")
        }
    }

    func property(_ path: ObjectPath, _ interface: String, _ name: String) async throws -> Value? {
        do {
            return try await call(path, .properties, "Get", [.string(interface), .string(name)]).first?.unwrapped
        } catch let error as DBusError where error.name == .invalidArgs || error.name == .unknownInterface {
            return nil
        }
    }

    func set(_ path: ObjectPath, _ interface: String, _ name: String, _ value: Value) async throws {
        try await call(path, .properties, "Set", [.string(interface), .string(name), .variant(value)])
    }

    func managedPaths() async throws -> [ObjectPath] {
        let reply = try await call("/", .objectManager, "GetManagedObjects")
        return reply.first?.dictionaryEntries?.compactMap(\.key.objectPath) ?? []
    }

    func startDiscovery(_ filter: [String: Value]? = nil, on connection: Connection? = nil) async throws {
        if let filter { try await call(Self.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.vardict(filter)], on: connection) }
        try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery", on: connection)
    }

    func stopDiscovery() async throws {
        try await call(Self.adapter, "org.bluez.Adapter1", "StopDiscovery")
    }

    /// Discovers until `path` is on the bus.
    func discover(_ path: ObjectPath) async throws {
        if try await property(Self.adapter, "org.bluez.Adapter1", "Discovering")?.bool != true {
            try await startDiscovery()
        }
        try await waitUntil("\(path) appears") { try await self.managedPaths().contains(path) }
    }

    /// Discovers, connects and waits for ServicesResolved.
    func connect(_ path: ObjectPath) async throws {
        if try await !managedPaths().contains(path) { try await discover(path) }
        try await call(path, "org.bluez.Device1", "Connect")
        try await waitUntil("services of \(path) resolve") {
            try await self.property(path, "org.bluez.Device1", "ServicesResolved")?.bool == true
        }
    }
}

/// Polls `condition` until it holds; fails the test after `timeout`.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(15), _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    if try await condition() { return }
    throw WaitTimeout("timed out waiting until \(what)")
}

struct WaitTimeout: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
