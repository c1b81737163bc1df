import DBus

extension Central {
    /// Reads a characteristic's value (from `offset`), with one D-Bus call
    /// (`ReadValue`), in the device's operation lane.
    public func read(
        _ characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) -> [UInt8] {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveCharacteristic(characteristic, of: address, adapter: adapter)
        let reply = try await inLane(devicePath, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattCharacteristic1.interface, "ReadValue",
                [GattCharacteristic1.readOptions(offset: offset)], deadline: deadline)
        }
        return reply.first?.bytes ?? []
    }

    /// Writes a characteristic's value with one D-Bus call (`WriteValue`).
    ///
    /// A `.command` write (without response) longer than the ATT MTU - 3
    /// cannot be sent in one packet: it is refused with `.invalidArguments`
    /// before anything is sent.
    public func write(
        _ value: [UInt8], to characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        type: WriteType = .request, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveCharacteristic(characteristic, of: address, adapter: adapter)
        if type == .command {
            // 23 is the minimum ATT MTU (Core Spec Vol 3, Part F, 3.2.8),
            // the one in force when bluetoothd reports none.
            let mtu = Int(target.mtu ?? 23)
            guard value.count <= mtu - 3 else {
                throw BlueZError(
                    .invalidArguments,
                    "a write without response carries at most MTU - 3 = \(mtu - 3) bytes; this value has \(value.count)")
            }
        }
        _ = try await inLane(devicePath, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattCharacteristic1.interface, "WriteValue",
                [.bytes(value), GattCharacteristic1.writeOptions(type: type, offset: offset)], deadline: deadline)
        }
    }

    /// Reads a descriptor's value.
    public func readDescriptor(
        _ descriptor: AttributeSelector, of characteristic: AttributeSelector, device address: BluetoothAddress,
        adapter: String? = nil, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) -> [UInt8] {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveDescriptor(descriptor, of: characteristic, device: address, adapter: adapter)
        let reply = try await inLane(devicePath, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattDescriptor1.interface, "ReadValue",
                [GattCharacteristic1.readOptions(offset: offset)], deadline: deadline)
        }
        return reply.first?.bytes ?? []
    }

    /// Writes a descriptor's value.
    public func writeDescriptor(
        _ value: [UInt8], to descriptor: AttributeSelector, of characteristic: AttributeSelector,
        device address: BluetoothAddress, adapter: String? = nil, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveDescriptor(descriptor, of: characteristic, device: address, adapter: adapter)
        let options: Value = offset == 0 ? .vardict([:]) : .vardict(["offset": .uint16(offset)])
        _ = try await inLane(devicePath, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattDescriptor1.interface, "WriteValue", [.bytes(value), options], deadline: deadline)
        }
    }

    /// Runs `body` in a device's lane, every error as a `BlueZError`.
    func inLane<T: Sendable>(
        _ devicePath: ObjectPath, deadline: ContinuousClock.Instant, _ body: () async throws -> T
    ) async throws(BlueZError) -> T {
        do {
            return try await lanes.run(devicePath, deadline: deadline, body)
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    func resolveCharacteristic(_ selector: AttributeSelector, of address: BluetoothAddress, adapter: String?)
        throws(BlueZError) -> (ObjectPath, GATTCharacteristic)
    {
        // Looked up under the lock: a copy of the tree held past it would
        // make the next reducer step copy the dictionaries it changes.
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            return (device.path, try state.tree.characteristic(selector, ofDevice: device.path))
        }
    }

    func resolveDescriptor(
        _ selector: AttributeSelector, of characteristic: AttributeSelector, device address: BluetoothAddress,
        adapter: String?
    ) throws(BlueZError) -> (ObjectPath, GATTDescriptor) {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            let owner = try state.tree.characteristic(characteristic, ofDevice: device.path)
            return (device.path, try state.tree.descriptor(selector, of: owner))
        }
    }
}
