import DBus

// Snapshots for GET routes: read from the mirror, no D-Bus traffic.

extension Central {
    /// Whether bluetoothd is running and the mirror reflects it.
    public var isBluetoothdRunning: Bool { state.withLock { $0.bluetoothdRunning } }

    /// Whether BlueZ can be reached: the bus connection is up and
    /// bluetoothd owns `org.bluez` (and why not, when not).
    public var availability: BlueZAvailability { state.withLock { $0.availability } }

    /// The adapters, by name.
    public func adapters() -> [Adapter] {
        state.withLock { $0.tree.adapters.values.sorted { $0.id < $1.id } }
    }

    /// The adapter called `id`, or the first one by name when nil.
    /// Throws `.adapterUnavailable` when there is none (or bluetoothd is not
    /// running) and `.notFound` for an unknown name.
    public func adapter(_ id: String? = nil) throws(BlueZError) -> Adapter {
        try adapterSnapshot(id)
    }

    /// The state of an adapter (the first one when nil), in the spirit of
    /// `CBManagerState`.
    public func adapterState(_ id: String? = nil) -> AdapterState {
        (try? adapterSnapshot(id))?.state ?? .unavailable
    }

    func adapterSnapshot(_ id: String?) throws(BlueZError) -> Adapter {
        try state.withLock { state throws(BlueZError) in
            guard state.bluetoothdRunning else { throw state.unavailability }
            let adapters = state.tree.adapters.values
            if let id {
                guard let adapter = adapters.first(where: { $0.id == id }) else {
                    throw BlueZError(.notFound, "no adapter \(id)")
                }
                return adapter
            }
            guard let first = adapters.min(by: { $0.id < $1.id }) else {
                throw BlueZError(.adapterUnavailable, "no Bluetooth adapter")
            }
            return first
        }
    }

    /// The devices bluetoothd knows, by address; optionally only those of
    /// one adapter, connected or not, or advertising (or serving) a service.
    public func devices(adapter: String? = nil, connected: Bool? = nil, service: BluetoothUUID? = nil) -> [Device] {
        state.withLock { state in
            state.tree.devices.values.filter { device in
                (adapter == nil || device.adapter == adapter) && (connected == nil || device.connected == connected)
                    && (service == nil || service.map(device.advertisement.serviceUUIDs.contains) == true)
            }
            .map(state.tree.linkedDevice)
        }
        .sorted { ($0.address, $0.adapter) < ($1.address, $1.adapter) }
    }

    /// One device by address, on `adapter` or, when nil, on the first
    /// adapter that knows it. Throws `.notFound`, or
    /// `.bluetoothdUnavailable` while BlueZ cannot be reached.
    public func device(_ address: BluetoothAddress, adapter: String? = nil) throws(BlueZError) -> Device {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            return state.tree.linkedDevice(device)
        }
    }

    /// The GATT database of a connected device: services, by handle, with
    /// their characteristics and descriptors; only the services with the
    /// given UUIDs when `serviceUUIDs` is not empty.
    ///
    /// Throws `.notFound` for an unknown device and `.notConnected` when it
    /// is not connected. Services not resolved yet give an empty list.
    public func services(
        of address: BluetoothAddress, adapter: String? = nil, serviceUUIDs: [BluetoothUUID] = []
    ) throws(BlueZError) -> [GATTService] {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            guard device.connected else { throw BlueZError(.notConnected, "\(address) is not connected") }
            return state.tree.gattServices(of: device.path, serviceUUIDs: serviceUUIDs)
        }
    }

    /// One characteristic (with its descriptors) of a device. A UUID that
    /// several characteristics share throws `.ambiguous` listing them;
    /// `.notFound` when none matches.
    public func characteristic(
        _ selector: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil
    ) throws(BlueZError) -> GATTCharacteristic {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            return state.tree.snapshot(of: try state.tree.characteristic(selector, ofDevice: device.path))
        }
    }

    /// One descriptor of a characteristic: by UUID among the
    /// characteristic's descriptors, or by handle.
    public func descriptor(
        _ selector: AttributeSelector, of characteristic: AttributeSelector, device address: BluetoothAddress,
        adapter: String? = nil
    ) throws(BlueZError) -> GATTDescriptor {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            let owner = try state.tree.characteristic(characteristic, ofDevice: device.path)
            return GATTDescriptor(try state.tree.descriptor(selector, of: owner))
        }
    }
}
