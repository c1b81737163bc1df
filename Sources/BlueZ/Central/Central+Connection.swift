import AsyncPrimitives
import DBus

extension Central {
    /// Connects to a device and waits until its services are resolved.
    ///
    /// - A device bluetoothd does not list yet is looked for first (see
    ///   `find`), within the same deadline.
    /// - Takes one of the adapter's connection slots (`options.slotLimits`)
    ///   for the attempt. With no `adapter`, the device goes to the powered
    ///   adapter that hears it best (RSSI of its object there) and has a
    ///   free slot. When none has, the call waits, behind earlier ones, for
    ///   a slot to free (a device disconnecting or dropping its link) until
    ///   the deadline, then throws `.noConnectionSlot`.
    /// - Skips `Connect()` when the mirror shows the device connected.
    /// - Waits for `ServicesResolved` by racing it against the device
    ///   disconnecting, the device being removed, and the deadline; it does
    ///   not wait for `PropertiesChanged(Connected=true)`, which bluetoothd
    ///   5.66 often omits (`Connect()` returning is taken as connected).
    /// - Retries `le-connection-abort-by-local` up to `options.connectRetries`
    ///   times.
    /// - On timeout or cancellation, cancels the attempt with `Disconnect()`.
    ///
    /// Runs in the device's operation lane. Returns the device as connected.
    @discardableResult
    public func connect(_ address: BluetoothAddress, adapter: String? = nil, timeout: Duration? = nil)
        async throws(BlueZError) -> Device
    {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        do {
            _ = try self.device(address, adapter: adapter)
        } catch where error.code == .notFound {
            _ = try await find(address, adapter: adapter, deadline: deadline)
        }
        let slot = try await takeSlot(for: address, adapter: adapter, deadline: deadline)
        defer { releaseSlot(slot) }
        let device = try self.device(address, path: slot.path)
        guard (try adapterSnapshot(device.adapter)).powered else {
            throw BlueZError(.poweredOff, "\(device.adapter) is powered off")
        }
        do {
            return try await lanes.run(device.path, deadline: deadline) { () async throws in
                try await self.connectInLane(device.path, address: address, deadline: deadline)
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    /// Scans until bluetoothd lists `address`, and returns the device.
    ///
    /// bluetoothd creates a device object only for an address it has heard
    /// (or was given by `Adapter1.ConnectDevice`, which 5.66 offers only
    /// when started with `--experimental`: src/adapter.c declares it with
    /// `GDBUS_EXPERIMENTAL_ASYNC_METHOD`). So this runs a discovery session
    /// filtered to the address, sharing the adapter's discovery with every
    /// other session, until the device is reported or the deadline passes
    /// (`.timeout`). The session ends as soon as this returns.
    private func find(_ address: BluetoothAddress, adapter: String?, deadline: ContinuousClock.Instant)
        async throws(BlueZError) -> Device
    {
        let session: DiscoverySession
        do {
            session = try await scan(
                adapter: adapter, filter: DiscoveryFilter(address: address), bufferSize: 16,
                timeout: ContinuousClock.now.duration(to: deadline))
        } catch where error.code == .timeout {
            // The time ran out while the scan was starting: still, the
            // caller's question was about this address.
            throw BlueZError(
                .timeout, "\(address) was not found in time: \(error.message)", dbusName: error.dbusName,
                dbusMessage: error.dbusMessage)
        }
        // An adapter that goes away (unplugged) will not find it: that ends
        // the search at once, so a caller that can use another adapter (the
        // keeper) need not wait for the deadline.
        let finder = Task { () -> Result<Device, BlueZError>? in
            for await event in session {
                switch event {
                case .discovered(let device): return .success(device)
                case .interrupted(let error) where error.code == .adapterUnavailable: return .failure(error)
                default: continue
                }
            }
            return nil
        }
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            finder.cancel()
        }
        let found = await withTaskCancellationHandler {
            await finder.value
        } onCancel: {
            finder.cancel()
        }
        timer.cancel()
        guard let found else {
            if Task.isCancelled { throw BlueZError(.cancelled, "the connection was cancelled") }
            throw BlueZError(.timeout, "\(address) was not found: no advertisement from it was heard in time")
        }
        return try found.get()
    }

    private func connectInLane(_ path: ObjectPath, address: BluetoothAddress, deadline: ContinuousClock.Instant)
        async throws(BlueZError) -> Device
    {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await connectAttempt(path, address: address, deadline: deadline)
            } catch where Self.isTransient(error) && attempt <= options.connectRetries {
                // A transient abort (seen on busy controllers): try again
                // after a pause, within the caller's deadline.
                try? await Task.sleep(for: options.connectRetryDelay)
                if Task.isCancelled { throw BlueZError(.cancelled, "the connection was cancelled") }
            } catch where error.code == .timeout || error.code == .cancelled {
                // Cancel the pending connection in bluetoothd, even though
                // this task is cancelled (so in a task of its own).
                await Task { _ = try? await self.call(path, Device1.interface, "Disconnect", deadline: .now + .seconds(5)) }.value
                throw error
            } catch {
                throw BlueZError.wrapping(error)
            }
        }
    }

    static func isTransient(_ error: BlueZError) -> Bool {
        error.dbusMessage?.contains("le-connection-abort-by-local") == true
    }

    /// One attempt: Connect() (unless already connected) raced against the
    /// tree's verdict.
    private func connectAttempt(_ path: ObjectPath, address: BluetoothAddress, deadline: ContinuousClock.Instant)
        async throws(BlueZError) -> Device
    {
        let (id, promise) = waiter { tree, changes in
            guard let device = tree.devices[path] else {
                return .failure(BlueZError(.notFound, "the device \(address) was removed while connecting"))
            }
            if device.servicesResolved { return .success(()) }
            for case .deviceDisconnected(path, let reason) in changes {
                return .failure(
                    BlueZError(
                        .connectionFailed,
                        "\(address) disconnected before its services were resolved" + (reason.map { " (\($0))" } ?? "")))
            }
            return nil
        }
        defer { removeWaiter(id) }
        let alreadyConnected = state.withLock { $0.tree.devices[path]?.connected ?? false }
        let timeout = BlueZError(.timeout, "\(address) did not connect in time")
        if alreadyConnected {
            try await finish(promise, path: path, deadline: deadline, timeout: timeout)
            return try device(address, path: path)
        }
        let connectCall = Task { () async throws in
            _ = try await self.call(path, Device1.interface, "Connect", deadline: deadline)
        }
        // Whichever comes first: Connect() failing, or the tree's verdict.
        let racer = Task {
            do {
                try await connectCall.value
                apply(.connectReturned(path))
                state.withLock { _ = $0.connectedByUs.insert(path) }
            } catch let error as BlueZError where error.code == .alreadyExists {
                apply(.connectReturned(path))
            } catch let error as BlueZError {
                promise.resolve(.failure(error))
            } catch {
                promise.resolve(.failure(BlueZError.wrapping(error)))
            }
        }
        do {
            try await withTaskCancellationHandler { () async throws in
                try await finish(promise, path: path, deadline: deadline, timeout: timeout)
            } onCancel: {
                connectCall.cancel()
            }
        } catch {
            connectCall.cancel()
            _ = await racer.value
            throw BlueZError.wrapping(error)
        }
        await awaitGATTObjects(path, deadline: deadline)
        return try device(address, path: path)
    }

    /// bluetoothd 5.66 flushes each object's D-Bus changes from an idle
    /// callback of its own, so the device's `ServicesResolved=true` can go
    /// out before the `InterfacesAdded` of its GATT objects (gdbus/object.c,
    /// `add_pending` / `process_changes`; seen in the VM as a read right
    /// after connect finding no characteristic). Before sending any reply it
    /// flushes every pending change (`g_dbus_flush`), and this connection
    /// applies signals before it delivers a later reply: so after one round
    /// trip to bluetoothd the mirror holds the whole GATT tree.
    func awaitGATTObjects(_ path: ObjectPath, deadline: ContinuousClock.Instant) async {
        _ = try? await call(
            path, ObjectManager.properties, "Get", [.string(Device1.interface.rawValue), .string("ServicesResolved")],
            deadline: min(deadline, .now + .seconds(2)))
    }

    /// Waits for the connection's outcome. At the deadline, asks once
    /// whether the services are resolved after all (a signal lost on the
    /// way would otherwise turn a good connection into a timeout).
    private func finish(_ promise: Promise<Void, BlueZError>, path: ObjectPath, deadline: ContinuousClock.Instant, timeout: BlueZError)
        async throws(BlueZError)
    {
        let outcome = await promise.wait(deadline: deadline, timeout: timeout)
        switch outcome {
        case .success: return
        case .failure(let error) where error.code == .timeout:
            let reply = try? await call(
                path, ObjectManager.properties, "Get",
                [.string(Device1.interface.rawValue), .string("ServicesResolved")], deadline: .now + .seconds(2))
            if reply?.first?.bool == true {
                apply(.propertiesChanged(path, Device1.interface, ["ServicesResolved": .boolean(true)], invalidated: []))
                return
            }
            throw error
        case .failure(let error):
            throw error
        }
    }

    private func device(_ address: BluetoothAddress, path: ObjectPath) throws(BlueZError) -> Device {
        guard let device = state.withLock({ state in state.tree.devices[path].map(state.tree.linkedDevice) }) else {
            throw BlueZError(.notFound, "the device \(address) was removed")
        }
        return device
    }

    /// Disconnects a device (waiting behind its other operations), and
    /// waits briefly for bluetoothd to report the link down, which it does
    /// after `Disconnect()` returns. Not connected is not an error.
    public func disconnect(_ address: BluetoothAddress, adapter: String? = nil, timeout: Duration? = nil)
        async throws(BlueZError)
    {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let path = try device(address, adapter: adapter).path
        do {
            try await lanes.run(path, deadline: deadline) { () async throws in
                do {
                    _ = try await self.call(path, Device1.interface, "Disconnect", deadline: deadline)
                } catch let error as BlueZError where error.code == .notConnected {
                    return
                }
                self.state.withLock { _ = $0.connectedByUs.remove(path) }
                let (id, promise) = self.waiter { tree, _ in
                    tree.devices[path]?.connected == true ? nil : .success(())
                }
                defer { self.removeWaiter(id) }
                // bluetoothd not reporting it is not the caller's failure.
                _ = await promise.wait(deadline: min(deadline, .now + .seconds(5)), timeout: BlueZError(.timeout, ""))
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    /// Removes a device from bluetoothd (`Adapter1.RemoveDevice`): it
    /// disconnects, and its keys and cache are deleted. Returns once the
    /// mirror no longer lists it, or after 5 s: bluetoothd 5.66 answers
    /// `RemoveDevice` on a connected device at once and removes its object
    /// when the link is down, seconds later (seen in the VM rig).
    public func remove(_ address: BluetoothAddress, adapter: String? = nil, timeout: Duration? = nil)
        async throws(BlueZError)
    {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let device = try device(address, adapter: adapter)
        guard let adapterPath = device.path.parent else { throw BlueZError(.notFound, "no adapter for \(address)") }
        do {
            try await lanes.run(device.path, deadline: deadline) { () async throws in
                let (id, promise) = self.waiter { tree, _ in tree.devices[device.path] == nil ? .success(()) : nil }
                defer { self.removeWaiter(id) }
                _ = try await self.call(
                    adapterPath, Adapter1.interface, "RemoveDevice", [.objectPath(device.path)], deadline: deadline)
                // bluetoothd not reporting it is not the caller's failure.
                _ = await promise.wait(deadline: min(deadline, .now + .seconds(5)), timeout: BlueZError(.timeout, ""))
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }
}
