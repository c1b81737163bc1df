import DBus

extension SimulatorCore {
    func device(_ address: DeviceAddress) throws(SimulatorError) -> DeviceState {
        guard let device = devices.values.first(where: { $0.spec.address == address }) else {
            throw SimulatorError("no simulated device \(address)")
        }
        return device
    }

    func withDevice(_ address: DeviceAddress, _ change: (DeviceState) -> Void) throws(SimulatorError) {
        change(try device(address))
    }

    func controlAddDevice(_ spec: Scenario.Device) throws {
        if let adapter = spec.adapter, adapters[adapter] == nil { throw SimulatorError("no adapter \(adapter)") }
        scenario.devices.removeAll { $0.address == spec.address }
        scenario.devices.append(spec)
        try addDevice(spec)
    }

    func controlRemoveDevice(_ address: DeviceAddress) throws(SimulatorError) {
        let device = try device(address)
        scenario.devices.removeAll { $0.address == address }
        removeFromWorld(device)
    }

    func controlSetInRange(_ inRange: Bool, _ address: DeviceAddress) throws(SimulatorError) {
        let device = try device(address)
        device.rangeGeneration &+= 1
        setInRange(device, inRange)
    }

    func controlDropConnection(_ address: DeviceAddress) throws(SimulatorError) {
        let device = try device(address)
        if device.connected || device.connecting { dropConnection(device) }
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

    func exportedAddresses() -> [DeviceAddress] {
        devices.values.filter(\.exported).map(\.spec.address).sorted()
    }
}
