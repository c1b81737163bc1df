import DBus

extension SimulatorCore {
    /// GattCharacteristic1.StartNotify (`characteristic_start_notify`):
    /// NotSupported without notify/indicate; one session per client.
    func startNotify(_ path: ObjectPath, client: BusName?) throws(DBusError) {
        let (device, index) = try characteristic(at: path)
        guard device.database.characteristics[index].notifies else { throw BluetoothdError.notSupported }
        let client = client ?? BusName(unchecked: ":0.0")
        // One session per client: a second StartNotify is InProgress "In
        // Progress" (seen in the VM rig).
        if device.notifySessions[index]?.contains(client) == true { throw BluetoothdError.inProgress }
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        device.notifySessions[index, default: []].insert(client)
        if device.notifySessions[index]?.count == 1 { setNotifying(device, index, true) }
    }

    /// GattCharacteristic1.StopNotify: Failed "No notify session started"
    /// for a client without a session.
    func stopNotify(_ path: ObjectPath, client: BusName?) throws(DBusError) {
        let (device, index) = try characteristic(at: path)
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
        let characteristic = device.database.characteristics[index]
        let service = device.database.services[characteristic.service]
        return ObjectPath(rawValue: "\(device.path.rawValue)/\(service.component)/\(characteristic.component)")
    }

    /// A notification or indication from the peripheral: bluetoothd sets
    /// the Value property and flushes one PropertiesChanged per value.
    func notify(_ device: DeviceState, _ index: Int, _ bytes: [UInt8]) {
        guard device.connected, device.notifySessions[index] != nil, let path = characteristicPath(device, index)
        else { return }
        try? bus.objects.update(["Value": .bytes(bytes)], of: Self.characteristicInterface, at: path)
        counters.notifications += 1
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
        // (ticks that fell behind run in a burst, as values queued in a
        // peripheral would), but never more than a second behind.
        let next = max(due + .seconds(period), now - .seconds(1))
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

    func readDescriptor(_ path: ObjectPath, options: Value) throws(DBusError) -> [UInt8] {
        let (device, index, descriptor) = try self.descriptor(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        let parsed = try GATTOptions(options)
        let value = descriptor.isClientConfiguration
            ? (device.notifySessions[index] != nil
                ? [device.database.characteristics[index].spec.flags.contains("notify") ? 0x01 : 0x02, 0x00] : [0, 0])
            : descriptor.spec.value
        guard descriptor.spec.flags.contains("read") || descriptor.isClientConfiguration else {
            throw BluetoothdError.att(ATTError.readNotPermitted)
        }
        guard parsed.offset <= value.count else { throw BluetoothdError.att(ATTError.invalidOffset) }
        let result = Array(value[parsed.offset...])
        try? bus.objects.update(["Value": .bytes(result)], of: "org.bluez.GattDescriptor1", at: path)
        return result
    }

    /// Descriptor writes are acknowledged; the Client Characteristic
    /// Configuration belongs to bluetoothd (StartNotify), so writing it
    /// directly is refused.
    func writeDescriptor(_ path: ObjectPath, _ bytes: [UInt8], options: Value) throws(DBusError) {
        let (device, _, descriptor) = try self.descriptor(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        _ = try GATTOptions(options)
        guard !descriptor.isClientConfiguration, descriptor.spec.flags.contains("write") else {
            throw BluetoothdError.att(ATTError.writeNotPermitted)
        }
    }
}
