import DBus

extension SimulatorCore {
    /// GattCharacteristic1.StartNotify (`characteristic_start_notify`):
    /// NotSupported without notify/indicate; one session per client. The
    /// first session writes the CCC (a round trip to the peripheral); a
    /// second StartNotify from the same client meanwhile is InProgress "In
    /// Progress", afterwards it succeeds (both seen in the VM rig).
    func startNotify(_ path: ObjectPath, client: BusName?) async throws(DBusError) {
        let (device, index) = try characteristic(at: path)
        if device.acquiredNotify[index] != nil || device.acquiringNotify.contains(index) {
            throw BluetoothdError.notPermitted("Notify acquired")
        }
        guard device.database.characteristics[index].notifies else { throw BluetoothdError.notSupported }
        let client = client ?? BusName(unchecked: ":0.0")
        if device.notifySessions[index]?.contains(client) == true {
            if device.pendingNotify.contains(index) { throw BluetoothdError.inProgress }
            return
        }
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        device.notifySessions[index, default: []].insert(client)
        guard device.notifySessions[index]?.count == 1 else { return }
        device.pendingNotify.insert(index)
        let generation = device.connectionGeneration
        await sleep(scaled: 0.05)
        device.pendingNotify.remove(index)
        guard device.connectionGeneration == generation, device.notifySessions[index] != nil else {
            throw BluetoothdError.failed("Not connected")
        }
        setNotifying(device, index, true)
    }

    /// GattCharacteristic1.StopNotify: Failed "No notify session started"
    /// for a client without a session. While AcquireNotify's socket exists,
    /// any client's StopNotify closes it (and succeeds).
    func stopNotify(_ path: ObjectPath, client: BusName?) throws(DBusError) {
        let (device, index) = try characteristic(at: path)
        if device.acquiredNotify[index] != nil { return endAcquiredNotify(device, index) }
        let client = client ?? BusName(unchecked: ":0.0")
        guard device.notifySessions[index]?.remove(client) != nil else {
            throw BluetoothdError.failed("No notify session started")
        }
        if device.notifySessions[index]?.isEmpty == true {
            device.notifySessions[index] = nil
            setNotifying(device, index, false)
        }
    }

    func setNotifying(_ device: DeviceState, _ index: Int, _ notifying: Bool) {
        guard let path = characteristicPath(device, index),
            let current = bus.objects.property("Notifying", of: Self.characteristicInterface, at: path)?.bool,
            current != notifying
        else { return }
        try? bus.objects.update(["Notifying": .boolean(notifying)], of: Self.characteristicInterface, at: path)
    }

    func characteristicPath(_ device: DeviceState, _ index: Int) -> ObjectPath? {
        device.characteristicPaths[index]
    }

    /// A notification or indication from the peripheral: bluetoothd sets
    /// the Value property and flushes one PropertiesChanged per value.
    func notify(_ device: DeviceState, _ index: Int, _ bytes: [UInt8]) {
        // The peripheral sends nothing before its CCC is written.
        guard device.connected, device.notifySessions[index] != nil, !device.pendingNotify.contains(index),
            let path = characteristicPath(device, index)
        else { return }
        counters.notifications += 1
        // Acquired: one packet on the socket, and no Value change.
        if !device.acquiredNotify.isEmpty, let socket = device.acquiredNotify[index] {
            socket.send(bytes)
            return
        }
        try? bus.objects.update(["Value": .bytes(bytes)], of: Self.characteristicInterface, at: path)
    }

    // MARK: Behaviour clocks

    /// Starts the periodic behaviours of a connected device.
    func startTicks(_ device: DeviceState) {
        let now = ContinuousClock.now
        for (index, model) in device.characteristics.enumerated() {
            guard let period = model.period else { continue }
            timers.schedule(
                .tick(device.path, characteristic: index, generation: device.connectionGeneration),
                at: now + .seconds(period))
        }
    }

    func tick(
        _ path: ObjectPath, characteristic index: Int, generation: UInt64, due: ContinuousClock.Instant,
        now: ContinuousClock.Instant
    ) {
        guard let device = devices[path], device.connected, device.connectionGeneration == generation,
            let period = device.characteristics[index].period
        else { return }
        // Keep the rate: the next tick is one period after this one was due
        // (ticks that fell behind run in a short burst), but never more
        // than 50 ms behind: an overloaded machine gets a lower rate, not a
        // growing backlog.
        // Nobody subscribed: the value still moves, but at most twice a
        // second, so that fast streams cost nothing until someone listens.
        let idle = device.notifySessions[index] == nil
        let next = max(due + .seconds(idle ? max(period, 0.5) : period), now - .milliseconds(50))
        timers.schedule(.tick(path, characteristic: index, generation: generation), at: next)
        if let value = device.characteristics[index].tick(random: &random) {
            updateBattery(device, index, value)
            notify(device, index, value)
        }
    }

    // MARK: Descriptors

    func descriptor(at path: ObjectPath) throws(DBusError) -> (DeviceState, Int, GATTDatabase.Descriptor) {
        guard let characteristicPath = path.parent else { throw DBusError(.unknownObject, "No such object path '\(path)'") }
        let (device, index) = try characteristic(at: characteristicPath)
        guard let descriptor = device.database.characteristics[index].descriptors.first(where: {
            $0.component == path.lastElement
        }), bus.objects.contains(path) else { throw DBusError(.unknownObject, "No such object path '\(path)'") }
        return (device, index, descriptor)
    }

    func readDescriptor(_ path: ObjectPath, options: Value) async throws(DBusError) -> [UInt8] {
        let (device, index, descriptor) = try self.descriptor(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        let parsed = try GATTOptions(options)
        return try await mergedRead(path, offset: parsed.offset) { () async throws(DBusError) in
            try await peripheralAnswers(device)
            return try descriptorValue(path, device, index, descriptor, offset: parsed.offset)
        }
    }

    private func descriptorValue(
        _ path: ObjectPath, _ device: DeviceState, _ index: Int, _ descriptor: GATTDatabase.Descriptor, offset: Int
    ) throws(DBusError) -> [UInt8] {
        let value = descriptor.isClientConfiguration
            ? (device.notifySessions[index] != nil
                ? [device.database.characteristics[index].spec.flags.contains("notify") ? 0x01 : 0x02, 0x00] : [0, 0])
            : descriptor.spec.value
        guard descriptor.spec.flags.contains("read") || descriptor.isClientConfiguration else {
            throw BluetoothdError.att(ATTError.readNotPermitted)
        }
        guard offset <= value.count else { throw BluetoothdError.att(ATTError.invalidOffset) }
        let result = Array(value[offset...])
        try? bus.objects.update(["Value": .bytes(result)], of: "org.bluez.GattDescriptor1", at: path)
        return result
    }

    /// Descriptor writes are acknowledged; the Client Characteristic
    /// Configuration belongs to bluetoothd (StartNotify), so writing it
    /// directly is refused.
    func writeDescriptor(_ path: ObjectPath, _ bytes: [UInt8], options: Value) async throws(DBusError) {
        let (device, _, descriptor) = try self.descriptor(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        try checkNoWriteInFlight(path)
        _ = try GATTOptions(options)
        try await exclusiveWrite(path) { () async throws(DBusError) in
            try await peripheralAnswers(device)
            guard !descriptor.isClientConfiguration, descriptor.spec.flags.contains("write") else {
                throw BluetoothdError.att(ATTError.writeNotPermitted)
            }
        }
    }
}
