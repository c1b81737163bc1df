import DBus

/// The control API: change the simulated world while clients watch it
/// through D-Bus. Every call takes effect in order with the simulator's own
/// events; errors are `SimulatorError`.
extension SimulatedBlueZ {
    /// Puts a new peripheral in range (it appears on the bus when discovery
    /// sees it, or at once if `paired`). Replaces a device with the same
    /// address.
    public func addDevice(_ device: Scenario.Device) async throws {
        try await core.controlAddDevice(device)
    }

    /// Takes a peripheral out of the world: a connection to it drops and
    /// its object is removed.
    public func removeDevice(_ address: DeviceAddress) async throws {
        try await core.controlRemoveDevice(address)
    }

    /// Moves a peripheral: its advertisements now arrive with this RSSI
    /// (at every adapter that hears it).
    public func setRSSI(_ rssi: Int16, of address: DeviceAddress) async throws {
        try await core.withDevice(address) { $0.rssi = rssi }
    }

    /// Moves a peripheral relative to one adapter: its advertisements
    /// arrive there with this RSSI (the object under that adapter; see
    /// `Scenario.Device.heardBy`).
    public func setRSSI(_ rssi: Int16, of address: DeviceAddress, adapter: String) async throws {
        try await core.controlSetRSSI(rssi, of: address, adapter: adapter)
    }

    /// Takes a peripheral out of radio range (it stops advertising, a
    /// connection drops as with a supervision timeout) or brings it back.
    public func setInRange(_ inRange: Bool, _ address: DeviceAddress) async throws {
        try await core.controlSetInRange(inRange, address)
    }

    /// Makes the next `count` Connect calls to the device fail with
    /// bluetoothd's `reason` (`le-connection-abort-by-local`, ...).
    public func failConnections(
        _ address: DeviceAddress, count: Int, reason: String = "le-connection-abort-by-local"
    ) async throws {
        try await core.withDevice(address) { device in
            device.connectFailuresLeft = count
            device.spec.connection.error = reason
        }
    }

    /// Holds back (or lets go) the peripheral's answers to ATT requests, as
    /// a busy or slow peripheral would: reads and write requests stay in
    /// flight in bluetoothd until released, so concurrent calls meet them
    /// there (merged reads, `InProgress`). A dropped link fails them.
    public func holdGATT(_ hold: Bool, of address: DeviceAddress) async throws {
        try await core.controlHoldGATT(hold, address)
    }

    /// How many ATT requests wait for the peripheral's answer (held back
    /// with `holdGATT`).
    public func heldGATTRequests(of address: DeviceAddress) async throws -> Int {
        try await core.heldRequestCount(address)
    }

    /// The peripheral drops the link (as when it is switched off).
    public func dropConnection(_ address: DeviceAddress) async throws {
        try await core.controlDropConnection(address)
    }

    /// Sets a characteristic's value on the peripheral; when clients are
    /// subscribed it is notified (PropertiesChanged(Value)).
    ///
    /// - Parameter service: picks among characteristics sharing `uuid`.
    public func setValue(
        _ value: [UInt8], characteristic uuid: GATTUUID, service: GATTUUID? = nil, of address: DeviceAddress
    ) async throws {
        try await core.controlSetValue(value, uuid, service: service, address)
    }

    /// Powers an adapter on or off, as `rfkill` or a controller reset
    /// would (clients see `Powered` change).
    public func setPowered(_ powered: Bool, adapter: String = "hci0") async throws {
        try await core.controlSetPowered(powered, adapter: adapter)
    }

    /// Takes an adapter away or brings it back (as unplugging a USB
    /// adapter, or a controller attached only after bluetoothd started):
    /// its object, its devices and what clients registered on it go; back,
    /// it is as the scenario defines it.
    public func setAdapterPresent(_ present: Bool, adapter: String = "hci0") async throws {
        try await core.controlSetAdapterPresent(present, adapter: adapter)
    }

    /// Drops the name `org.bluez` and all objects, then takes them again,
    /// as a bluetoothd restart does: connections drop, discovered devices
    /// are forgotten, paired devices come back from storage.
    public func restart() async throws {
        try await core.restart()
    }

    /// Stops the simulated bluetoothd, as its process exiting would: the
    /// name `org.bluez` and every object go, connections drop; bonds are
    /// kept for `startBluetoothd`. Does nothing if it is stopped.
    public func stopBluetoothd() async throws {
        try await core.stopDaemon()
    }

    /// Starts the simulated bluetoothd again after `stopBluetoothd`: the
    /// objects come back (paired devices from storage) and it takes
    /// `org.bluez`. Does nothing if it runs.
    public func startBluetoothd() async throws {
        try await core.startDaemon()
    }

    /// Whether the simulated bluetoothd is running (not stopped by
    /// `stopBluetoothd`).
    public var isBluetoothdRunning: Bool {
        get async { await !core.isDaemonStopped }
    }

    /// The device objects on the bus now.
    public func exportedDevices() async -> [DeviceAddress] {
        await core.exportedAddresses()
    }
}

/// A control call that cannot be done.
public struct SimulatorError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
