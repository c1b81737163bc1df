import AsyncPrimitives
import DBus

// How GATT operations share a device. bluetoothd 5.66 (src/gatt-client.c)
// merges a ReadValue into the read in flight of the same attribute at the
// same offset, answers InProgress to a read at another offset while one is in
// flight and to a second WriteValue (of any type) while a write is in flight,
// and queues everything else in the device's ATT queue. So the central sends
// one ReadValue for concurrent reads of one value (single flight), keeps a
// read at another offset, a second write and a second StartNotify/StopNotify
// of one attribute waiting for the first, and lets operations on different
// attributes go out together; its callers never see InProgress. Connect,
// disconnect and removal still hold the device alone.

extension Central {
    /// Reads a characteristic's value (from `offset`) with one D-Bus call
    /// (`ReadValue`), shared with the reads of the same value already in
    /// flight: all of them get its answer. A caller that is cancelled or
    /// times out stops waiting; the read goes on for the others.
    public func read(
        _ characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) -> [UInt8] {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try await resolveSettledCharacteristic(
            characteristic, of: address, adapter: adapter, deadline: deadline)
        return try await sharedRead(
            target.path, GattCharacteristic1.interface, of: devicePath, offset: offset, deadline: deadline)
    }

    /// Writes a characteristic's value with one D-Bus call (`WriteValue`),
    /// after the write of it already in flight, if any.
    ///
    /// A `.command` write (without response) longer than the ATT MTU - 3
    /// cannot be sent in one packet: it is refused with `.invalidArguments`
    /// before anything is sent.
    public func write(
        _ value: [UInt8], to characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        type: WriteType = .request, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try await resolveSettledCharacteristic(
            characteristic, of: address, adapter: adapter, deadline: deadline)
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
        let claims: [LaneClaim<LaneKey>] = [.shared(.object(devicePath)), .exclusive(.writing(target.path))]
        _ = try await inLane(claims, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattCharacteristic1.interface, "WriteValue",
                [.bytes(value), GattCharacteristic1.writeOptions(type: type, offset: offset)], deadline: deadline)
        }
    }

    /// Reads a descriptor's value (shared with the same read in flight, as
    /// `read`).
    public func readDescriptor(
        _ descriptor: AttributeSelector, of characteristic: AttributeSelector, device address: BluetoothAddress,
        adapter: String? = nil, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) -> [UInt8] {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveDescriptor(descriptor, of: characteristic, device: address, adapter: adapter)
        return try await sharedRead(
            target.path, GattDescriptor1.interface, of: devicePath, offset: offset, deadline: deadline)
    }

    /// Writes a descriptor's value.
    public func writeDescriptor(
        _ value: [UInt8], to descriptor: AttributeSelector, of characteristic: AttributeSelector,
        device address: BluetoothAddress, adapter: String? = nil, offset: UInt16 = 0, timeout: Duration? = nil
    ) async throws(BlueZError) {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try resolveDescriptor(descriptor, of: characteristic, device: address, adapter: adapter)
        let options: Value = offset == 0 ? .vardict([:]) : .vardict(["offset": .uint16(offset)])
        let claims: [LaneClaim<LaneKey>] = [.shared(.object(devicePath)), .exclusive(.writing(target.path))]
        _ = try await inLane(claims, deadline: deadline) { () async throws in
            try await self.call(
                target.path, GattDescriptor1.interface, "WriteValue", [.bytes(value), options], deadline: deadline)
        }
    }

    /// One `ReadValue` of an attribute at `offset`, shared by every caller
    /// that asks while it is in flight. It runs in a task of its own, bound
    /// by the deadline of the caller that started it; each caller waits
    /// until its own deadline at most.
    func sharedRead(
        _ path: ObjectPath, _ interface: InterfaceName, of devicePath: ObjectPath, offset: UInt16,
        deadline: ContinuousClock.Instant
    ) async throws(BlueZError) -> [UInt8] {
        do {
            return try await reads.run(
                ReadKey(path: path, offset: offset), deadline: deadline,
                timeout: { BlueZError(.timeout, "the read did not complete in time") }
            ) {
                let claims: [LaneClaim<LaneKey>] = [.shared(.object(devicePath)), .exclusive(.reading(path))]
                let reply = try await self.inLane(claims, deadline: deadline) { () async throws in
                    try await self.call(
                        path, interface, "ReadValue", [GattCharacteristic1.readOptions(offset: offset)],
                        deadline: deadline)
                }
                return reply.first?.bytes ?? []
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    /// Runs `body` alone in a device's or adapter's lane, every error as a
    /// `BlueZError`.
    func inLane<T: Sendable>(
        _ path: ObjectPath, deadline: ContinuousClock.Instant, _ body: () async throws -> T
    ) async throws(BlueZError) -> T {
        try await inLane([.exclusive(.object(path))], deadline: deadline, body)
    }

    /// Runs `body` once `claims` are granted, every error as a `BlueZError`.
    func inLane<T: Sendable>(
        _ claims: [LaneClaim<LaneKey>], deadline: ContinuousClock.Instant, _ body: () async throws -> T
    ) async throws(BlueZError) -> T {
        do {
            return try await lanes.run(claims, deadline: deadline, body)
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    func resolveCharacteristic(_ selector: AttributeSelector, of address: BluetoothAddress, adapter: String?)
        throws(BlueZError) -> (ObjectPath, MirroredCharacteristic)
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

    /// As `resolveCharacteristic`, looking once more after a round trip to
    /// bluetoothd when the characteristic is missing from a device whose
    /// services are resolved: bluetoothd 5.66 can send `ServicesResolved`
    /// before the `InterfacesAdded` of the GATT objects (see
    /// `awaitGATTObjects`), so a consumer woken by that event (a standing
    /// subscription, a client that saw `services-resolved`) may look too
    /// early. Seen on the real bluetoothd in the VM: a fleet holder's
    /// subscription found no characteristic and waited for the next link.
    func resolveSettledCharacteristic(
        _ selector: AttributeSelector, of address: BluetoothAddress, adapter: String?, deadline: ContinuousClock.Instant
    ) async throws(BlueZError) -> (ObjectPath, MirroredCharacteristic) {
        do {
            return try resolveCharacteristic(selector, of: address, adapter: adapter)
        } catch where error.code == .notFound {
            let resolved = state.withLock { state in
                state.tree.device(address: address, adapter: adapter).flatMap { $0.servicesResolved ? $0.path : nil }
            }
            guard let devicePath = resolved else { throw error }
            await awaitGATTObjects(devicePath, deadline: deadline)
            return try resolveCharacteristic(selector, of: address, adapter: adapter)
        }
    }

    func resolveDescriptor(
        _ selector: AttributeSelector, of characteristic: AttributeSelector, device address: BluetoothAddress,
        adapter: String?
    ) throws(BlueZError) -> (ObjectPath, MirroredDescriptor) {
        try state.withLock { state throws(BlueZError) in
            guard let device = state.tree.device(address: address, adapter: adapter) else {
                throw BlueZError.deviceMissing(address, adapter: adapter, in: state)
            }
            let owner = try state.tree.characteristic(characteristic, ofDevice: device.path)
            return (device.path, try state.tree.descriptor(selector, of: owner))
        }
    }
}

/// A read shared by concurrent callers: one attribute at one offset.
struct ReadKey: Hashable, Sendable {
    let path: ObjectPath
    let offset: UInt16
}
