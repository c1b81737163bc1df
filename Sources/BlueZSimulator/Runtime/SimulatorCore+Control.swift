import DBus

extension SimulatorCore {
    func device(_ address: DeviceAddress) throws(SimulatorError) -> DeviceState {
        guard let device = devices.values.first(where: { $0.spec.address == address }) else {
            throw SimulatorError("no simulated device \(address)")
        }
        return device
    }

    /// Every object of a peer: one per adapter that hears it (`heardBy`).
    func deviceObjects(_ address: DeviceAddress) throws(SimulatorError) -> [DeviceState] {
        let found = devices.values.filter { $0.spec.address == address }.sorted { $0.adapter < $1.adapter }
        guard !found.isEmpty else { throw SimulatorError("no simulated device \(address)") }
        return found
    }

    /// The object of a peer under one adapter.
    func device(_ address: DeviceAddress, adapter: String) throws(SimulatorError) -> DeviceState {
        guard let device = devices.values.first(where: { $0.spec.address == address && $0.adapter == adapter }) else {
            throw SimulatorError("\(adapter) does not hear \(address)")
        }
        return device
    }

    func withDevice(_ address: DeviceAddress, _ change: (DeviceState) -> Void) throws(SimulatorError) {
        for device in try deviceObjects(address) { change(device) }
    }

    func controlSetRSSI(_ rssi: Int16, of address: DeviceAddress, adapter: String) throws(SimulatorError) {
        try device(address, adapter: adapter).rssi = rssi
    }

    func controlAddDevice(_ spec: Scenario.Device) throws {
        if let adapter = spec.adapter, adapters[adapter] == nil { throw SimulatorError("no adapter \(adapter)") }
        if let missing = spec.heardBy.keys.sorted().first(where: { adapters[$0] == nil }) {
            throw SimulatorError("no adapter \(missing)")
        }
        scenario.devices.removeAll { $0.address == spec.address }
        scenario.devices.append(spec)
        try addDevice(spec)
    }

    func controlRemoveDevice(_ address: DeviceAddress) throws(SimulatorError) {
        let objects = try deviceObjects(address)
        scenario.devices.removeAll { $0.address == address }
        for device in objects { removeFromWorld(device) }
    }

    func controlSetInRange(_ inRange: Bool, _ address: DeviceAddress) throws(SimulatorError) {
        for device in try deviceObjects(address) {
            device.rangeGeneration &+= 1
            setInRange(device, inRange)
        }
    }

    func controlDropConnection(_ address: DeviceAddress) throws(SimulatorError) {
        for device in try deviceObjects(address) where device.connected || device.connecting { dropConnection(device) }
    }

    func controlSetValue(_ value: [UInt8], _ uuid: GATTUUID, service: GATTUUID?, _ address: DeviceAddress)
        throws(SimulatorError)
    {
        let device = try device(address)
        guard let index = device.database.characteristics.firstIndex(where: { characteristic in
            characteristic.spec.uuid == uuid
                && (service.map { device.database.services[characteristic.service].spec.uuid == $0 } ?? true)
        }) else { throw SimulatorError("device \(address) has no characteristic \(uuid)") }
        device.characteristics[index].set(value)
        updateBattery(device, index, value)
        notify(device, index, value)
    }

    func controlSetPowered(_ powered: Bool, adapter id: String) throws {
        guard let adapter = adapters[id] else { throw SimulatorError("no adapter \(id)") }
        let wasPowered = adapter.powered
        try setPowered(adapter.path, powered)
        // Powering off announced itself; powering on is announced here.
        if powered, !wasPowered {
            try bus.objects.update(["Powered": .boolean(true)], of: "org.bluez.Adapter1", at: adapter.path)
        }
    }

    /// The adapter goes away (unplugged, or its controller not attached
    /// yet at boot) or comes back, as the kernel's index events make
    /// bluetoothd do: on removal its connections drop and its device
    /// objects go, the advertisements registered on it are released
    /// (`Release`), its applications forgotten, and its object goes; on
    /// return it is back as the scenario defines it, with its devices.
    func controlSetAdapterPresent(_ present: Bool, adapter id: String) async throws {
        if present {
            guard adapters[id] == nil else { return }
            guard let spec = scenario.adapters.first(where: { $0.id == id }) else {
                throw SimulatorError("the scenario has no adapter \(id)")
            }
            try addAdapter(spec)
            for device in scenario.devices { try addDevice(device, only: id) }
            return
        }
        guard let adapter = adapters[id] else { return }
        for device in devices.values where device.adapter == id { removeFromWorld(device) }
        let released = peripheral.adapterRemoved(adapter.path, id: id)
        if let central = released.central { bus.objects.remove(at: central) }
        adapters[id] = nil
        adapterOrder.removeAll { $0 == id }
        for path in bus.objects.paths(under: adapter.path) { bus.objects.remove(at: path) }
        bus.objects.remove(at: adapter.path)
        for key in released.advertisements {
            _ = try? await bus.call(
                destination: key.owner, path: key.path, interface: "org.bluez.LEAdvertisement1", method: "Release",
                timeout: .seconds(5))
        }
    }

    func exportedAddresses() -> [DeviceAddress] {
        devices.values.filter(\.exported).map(\.spec.address).sorted()
    }
}
