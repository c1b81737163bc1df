import BlueZ
import BlueZSimulator
import DBus
import TestSupport
import Synchronization

/// A private bus with the simulator serving `org.bluez` on one connection
/// and a `Central` started on another: the two talk only over D-Bus.
final class Harness: Sendable {
    let bus: TestBus
    let simulatorConnection: Connection
    let simulator: SimulatedBlueZ
    let connection: Connection
    let central: Central

    static let strap = address("C4:7C:8D:6A:3E:01")
    static let thermometer = address("A4:C1:38:2F:1B:07")
    static let plug = address("D0:73:D5:22:41:9C")
    static let beacon = address("F1:E2:D3:C4:B5:A6")

    static let heartRate = BluetoothUUID(uuid16: 0x180d)
    static let measurement = BluetoothUUID(uuid16: 0x2a37)
    static let sensorLocation = BluetoothUUID(uuid16: 0x2a38)
    static let controlPoint = BluetoothUUID(uuid16: 0x2a39)
    static let batteryLevel = BluetoothUUID(uuid16: 0x2a19)

    /// The default scenario, sped up by `timing` (1 is real time). Devices
    /// are kept 300 s × `timing` after they were last seen (6 s), not
    /// bluetoothd's 30 s: scaled down, that would be shorter than the
    /// scenario's advertising intervals, and on a loaded machine a device
    /// could expire (and be discovered again) in the middle of a test.
    init(
        scenario: Scenario = .default, timing: Double = 0.02,
        options: SimulatorOptions = SimulatorOptions(temporaryTimeout: 300),
        central centralOptions: Central.Options = Central.Options()
    )
        async throws
    {
        bus = try TestBus()
        simulatorConnection = try await bus.connect()
        var scenario = scenario
        scenario.timing = timing
        simulator = try await SimulatedBlueZ.start(on: simulatorConnection, scenario: scenario, options: options)
        connection = try await bus.connect()
        central = Central(connection: connection, options: centralOptions)
        try await central.start()
    }

    func shutdown() async {
        await central.stop()
        connection.close()
        await simulator.stop()
        simulatorConnection.close()
    }

    /// Scans until `address` is found (the simulator advertises every
    /// interval), so that bluetoothd has a device object for it.
    func discover(_ address: BluetoothAddress, timeout: Duration = .seconds(20)) async throws {
        let session = try await central.scan(filter: DiscoveryFilter())
        let found = await firstEvent(of: session, within: timeout) { event in
            if case .discovered(let device) = event, device.address == address { return true }
            return false
        }
        guard found != nil else { throw HarnessError("\(address) was not discovered") }
    }

    /// Discovers and connects `address`.
    func connected(_ address: BluetoothAddress) async throws {
        try await discover(address)
        try await central.connect(address, timeout: .seconds(20))
    }

    /// A call to bluetoothd from another client (another process, as far
    /// as bluetoothd can tell).
    func otherClientCall(_ path: ObjectPath, _ interface: InterfaceName, _ method: MemberName, _ arguments: [Value] = [])
        async throws -> [Value]
    {
        try await simulatorConnection.call(
            destination: "org.bluez", path: path, interface: interface, method: method, arguments: arguments)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func address(_ text: String) -> BluetoothAddress {
    // Literals of this file only; a typo fails every test that uses it.
    (try? BluetoothAddress(parsing: text)) ?? BluetoothAddress(rawValue: 0).unsafelyUnwrapped
}


/// Collects what `sequence` yields for `duration`.
func collect<S: AsyncSequence & Sendable>(_ sequence: S, for duration: Duration) async -> [S.Element]
where S.Element: Sendable {
    let task = Task {
        var items: [S.Element] = []
        do { for try await item in sequence { items.append(item) } } catch {}
        return items
    }
    try? await Task.sleep(for: duration)
    task.cancel()
    return await task.value
}

/// Collects `sequence`'s elements for at least `minimum`, then until
/// `enough` holds for them or `timeout` (from the start) passes: a loaded
/// machine may deliver late what a quiet one delivers within `minimum`.
func collect<S: AsyncSequence & Sendable>(
    _ sequence: S, for minimum: Duration, until enough: @escaping @Sendable ([S.Element]) -> Bool,
    timeout: Duration = .seconds(60)
) async -> [S.Element] where S.Element: Sendable {
    let items = Recorded<[S.Element]>([])
    let task = Task {
        do { for try await item in sequence { items.value.withLock { $0.append(item) } } } catch {}
    }
    let start = ContinuousClock.now
    try? await Task.sleep(for: minimum)
    _ = await eventually(within: timeout - (ContinuousClock.now - start)) { enough(items.value.withLock { $0 }) }
    task.cancel()
    await task.value
    return items.value.withLock { $0 }
}

/// A value that closures on other threads (a sink, a handler) record, for
/// the test to read.
final class Recorded<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}
