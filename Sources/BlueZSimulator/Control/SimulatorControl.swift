import DBus

/// The simulator's outside control: `org.blegateway.Simulator1` at
/// `/org/blegateway/simulator`, under the name `org.blegateway.Simulator`,
/// on a connection of its own (so it is no part of the simulated
/// bluetoothd: it stays while `org.bluez` is stopped, and `GetManagedObjects`
/// on `org.bluez` does not list it). Tests and users drive the simulated
/// world with `busctl` or `gdbus` (docs/simulator.md):
///
/// ```
/// busctl --address=$BUS call org.blegateway.Simulator /org/blegateway/simulator \
///     org.blegateway.Simulator1 SetInRange sb C4:7C:8D:6A:1B:01 false
/// ```
///
/// Methods: `SetInRange(s address, b in_range)`, `DropConnection(s
/// address)`, `SetRSSI(s address, n rssi)`, `SetAdapterRSSI(s address,
/// s adapter, n rssi)`, `RemoveDevice(s address)`,
/// `SetValue(s address, s characteristic, ay value)`, `SetPowered(s
/// adapter, b powered)`, `SetAdapterPresent(s adapter, b present)`,
/// `StopBluetoothd()`, `StartBluetoothd()`,
/// `RestartBluetoothd()`, `IsBluetoothdRunning() -> b`,
/// `ExportedDevices() -> as`. A refused call answers
/// `org.blegateway.Simulator.Error.Failed` (an unknown device, ...) or
/// `org.freedesktop.DBus.Error.InvalidArgs`.
public enum SimulatorControl {
    public static let busName = BusName(unchecked: "org.blegateway.Simulator")
    public static let path = ObjectPath(unchecked: "/org/blegateway/simulator")
    public static let interface = InterfaceName(unchecked: "org.blegateway.Simulator1")
    static let failed = ErrorName(unchecked: "org.blegateway.Simulator.Error.Failed")

    /// Exports the control interface of `simulator` on `connection` and
    /// takes the name `org.blegateway.Simulator` there.
    public static func export(_ simulator: SimulatedBlueZ, on connection: Connection) async throws {
        try connection.objects.add(controlInterface(simulator), at: path)
        let reply = try await connection.requestName(busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw DBusError(.failed, "\(busName) is already owned on this bus (another bluez-sim?)")
        }
    }

    static func controlInterface(_ simulator: SimulatedBlueZ) -> ExportedInterface {
        typealias Method = ExportedInterface.Method
        typealias Argument = ExportedInterface.Argument
        let address = Argument("address", .string)
        return ExportedInterface(
            interface,
            methods: [
                Method("SetInRange", inputs: [address, Argument("in_range", .boolean)]) { call in
                    let (device, inRange) = try (deviceAddress(call, 0), argument(call, 1, \.bool, "in_range"))
                    try await refusing { try await simulator.setInRange(inRange, device) }
                    return []
                },
                Method("DropConnection", inputs: [address]) { call in
                    let device = try deviceAddress(call, 0)
                    try await refusing { try await simulator.dropConnection(device) }
                    return []
                },
                Method("SetRSSI", inputs: [address, Argument("rssi", .int16)]) { call in
                    let (device, rssi) = try (deviceAddress(call, 0), argument(call, 1, \.int16, "rssi"))
                    try await refusing { try await simulator.setRSSI(rssi, of: device) }
                    return []
                },
                Method("SetAdapterRSSI", inputs: [address, Argument("adapter", .string), Argument("rssi", .int16)]) {
                    call in
                    let device = try deviceAddress(call, 0)
                    let (adapter, rssi) = try (argument(call, 1, \.string, "adapter"), argument(call, 2, \.int16, "rssi"))
                    try await refusing { try await simulator.setRSSI(rssi, of: device, adapter: adapter) }
                    return []
                },
                Method("RemoveDevice", inputs: [address]) { call in
                    let device = try deviceAddress(call, 0)
                    try await refusing { try await simulator.removeDevice(device) }
                    return []
                },
                Method(
                    "SetValue",
                    inputs: [address, Argument("characteristic", .string), Argument("value", .array(.byte))]
                ) { call in
                    let device = try deviceAddress(call, 0)
                    let text = try argument(call, 1, \.string, "characteristic")
                    guard let uuid = GATTUUID(text) else {
                        throw DBusError(.invalidArgs, "characteristic: '\(text)' is not a UUID")
                    }
                    let value = try argument(call, 2, \.bytes, "value")
                    try await refusing { try await simulator.setValue(value, characteristic: uuid, of: device) }
                    return []
                },
                Method("SetPowered", inputs: [Argument("adapter", .string), Argument("powered", .boolean)]) { call in
                    let (adapter, powered) = try (argument(call, 0, \.string, "adapter"), argument(call, 1, \.bool, "powered"))
                    try await refusing { try await simulator.setPowered(powered, adapter: adapter) }
                    return []
                },
                Method("SetAdapterPresent", inputs: [Argument("adapter", .string), Argument("present", .boolean)]) {
                    call in
                    let (adapter, present) = try (argument(call, 0, \.string, "adapter"), argument(call, 1, \.bool, "present"))
                    try await refusing { try await simulator.setAdapterPresent(present, adapter: adapter) }
                    return []
                },
                Method("StopBluetoothd") { _ in
                    try await refusing { try await simulator.stopBluetoothd() }
                    return []
                },
                Method("StartBluetoothd") { _ in
                    try await refusing { try await simulator.startBluetoothd() }
                    return []
                },
                Method("RestartBluetoothd") { _ in
                    try await refusing { try await simulator.restart() }
                    return []
                },
                Method("IsBluetoothdRunning", outputs: [Argument("running", .boolean)]) { _ in
                    [.boolean(await simulator.isBluetoothdRunning)]
                },
                Method("ExportedDevices", outputs: [Argument("addresses", .array(.string))]) { _ in
                    [.array(.string, await simulator.exportedDevices().map { .string($0.description) })]
                },
            ] + centralMethods(simulator))
    }

    static func argument<T>(_ call: MethodCall, _ index: Int, _ accessor: KeyPath<Value, T?>, _ name: String)
        throws(DBusError) -> T
    {
        guard index < call.arguments.count, let value = call.arguments[index][keyPath: accessor] else {
            throw DBusError(.invalidArgs, "\(name) is missing or of the wrong type")
        }
        return value
    }

    private static func deviceAddress(_ call: MethodCall, _ index: Int) throws(DBusError) -> DeviceAddress {
        let text = try argument(call, index, \.string, "address")
        guard let address = DeviceAddress(text) else {
            throw DBusError(.invalidArgs, "address: '\(text)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        return address
    }

    /// Runs a control call; its refusals (`SimulatorError`) become
    /// `org.blegateway.Simulator.Error.Failed`.
    static func refusing(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError(failed, "\(error)")
        }
    }
}
