import AsyncPrimitives
import DBus

extension Central {
    /// Pairs with a device (`Device1.Pair`) and waits until the mirror
    /// shows it paired. A device bluetoothd does not list yet is looked
    /// for, and a disconnected one is connected first, as
    /// `connect` does (services resolved), so that its characteristics are
    /// usable when this returns. A device already paired is returned as
    /// it is.
    ///
    /// bluetoothd asks the registered agent whatever the pairing method
    /// needs (see `PairingAgent`); its refusal, a wrong passkey, the device
    /// cancelling and the device not answering come back as
    /// `.pairingRejected`, `.authenticationFailed`, `.pairingCancelled` and
    /// `.pairingTimeout`. At the caller's deadline the pairing is cancelled
    /// (`CancelPairing`) and the call fails with `.timeout`.
    ///
    /// Runs in the device's operation lane, like connect.
    @discardableResult
    public func pair(_ address: BluetoothAddress, adapter: String? = nil, timeout: Duration? = nil)
        async throws(BlueZError) -> Device
    {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        var device: Device
        do {
            device = try self.device(address, adapter: adapter)
        } catch where error.code == .notFound {
            // Not listed yet: `connect` looks for it.
            device = try await connect(address, adapter: adapter, timeout: ContinuousClock.now.duration(to: deadline))
        }
        if device.paired { return device }
        if !device.connected {
            device = try await connect(address, adapter: adapter, timeout: ContinuousClock.now.duration(to: deadline))
        }
        let path = device.path
        do {
            return try await lanes.run(path, deadline: deadline) { () async throws in
                try await self.pairInLane(path, address: address, deadline: deadline)
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    private func pairInLane(_ path: ObjectPath, address: BluetoothAddress, deadline: ContinuousClock.Instant)
        async throws(BlueZError) -> Device
    {
        let (id, promise) = waiter { tree, _ in
            guard let device = tree.devices[path] else {
                return .failure(BlueZError(.notFound, "the device \(address) was removed while pairing"))
            }
            return device.paired ? .success(()) : nil
        }
        defer { removeWaiter(id) }
        do {
            _ = try await call(path, Device1.interface, "Pair", deadline: deadline)
        } catch where error.code == .alreadyExists {
            // Paired meanwhile (by bluetoothd raising the link's security,
            // or by another client): what the caller wanted.
        } catch where error.code == .timeout || error.code == .cancelled {
            await Task {
                _ = try? await self.call(path, Device1.interface, "CancelPairing", deadline: .now + .seconds(5))
            }.value
            throw error
        }
        // `Pair` returns once bonded; `Paired` reaches the mirror in a
        // signal sent before that reply, or just after it.
        let settle = min(deadline, .now + .seconds(5))
        if case .failure(let error) = await promise.wait(
            deadline: settle, timeout: BlueZError(.failed, "bluetoothd did not report \(address) paired"))
        {
            throw error
        }
        guard let device = state.withLock({ $0.tree.devices[path] }) else {
            throw BlueZError(.notFound, "the device \(address) was removed")
        }
        return device
    }

    /// Cancels a pairing in progress (`Device1.CancelPairing`).
    public func cancelPairing(_ address: BluetoothAddress, adapter: String? = nil) async throws(BlueZError) {
        let path = try device(address, adapter: adapter).path
        _ = try await call(path, Device1.interface, "CancelPairing", deadline: .now + options.defaultTimeout)
    }

    /// Sets `Trusted` (bluetoothd then authorizes the device's service
    /// requests without asking the agent) and/or `Blocked` (bluetoothd
    /// refuses the device's connections and drops the current one).
    /// Returns the device as the mirror then shows it.
    @discardableResult
    public func setDeviceFlags(
        _ address: BluetoothAddress, adapter: String? = nil, trusted: Bool? = nil, blocked: Bool? = nil,
        timeout: Duration? = nil
    ) async throws(BlueZError) -> Device {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let path = try device(address, adapter: adapter).path
        for (name, value) in [("Trusted", trusted), ("Blocked", blocked)] {
            guard let value else { continue }
            _ = try await call(
                path, ObjectManager.properties, "Set",
                [.string(Device1.interface.rawValue), .string(name), .variant(.boolean(value))], deadline: deadline)
        }
        // The Set reply follows the PropertiesChanged bluetoothd sent for
        // it, and signals are applied before replies are delivered.
        guard let device = state.withLock({ $0.tree.devices[path] }) else {
            throw BlueZError(.notFound, "the device \(address) was removed")
        }
        return device
    }
}
