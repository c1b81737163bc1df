import DBus

extension SimulatorCore {
    /// The Device1 properties of a device as bluetoothd first announces it:
    /// optional properties (Name, Appearance, Icon, RSSI, TxPower,
    /// ManufacturerData, ServiceData) only when known.
    func deviceProperties(_ device: DeviceState) -> [String: Value] {
        let spec = device.spec
        var properties: [String: Value] = [
            "Address": .string(spec.address.description), "AddressType": .string(spec.addressType.rawValue),
            "Alias": .string(spec.name ?? spec.address.description.replacing(":", with: "-")),
            "Paired": .boolean(device.paired), "Bonded": .boolean(device.paired), "Trusted": .boolean(device.trusted),
            "Blocked": .boolean(device.blocked), "LegacyPairing": .boolean(false),
            "Connected": .boolean(device.connected), "UUIDs": .strings(deviceUUIDs(device)),
            "Adapter": .objectPath(device.path.parent ?? "/org/bluez"),
            "ServicesResolved": .boolean(device.servicesResolved),
        ]
        if let name = spec.name { properties["Name"] = .string(name) }
        if let appearance = spec.appearance {
            properties["Appearance"] = .uint16(appearance)
            if let icon = spec.icon ?? Interfaces.icon(appearance: appearance) { properties["Icon"] = .string(icon) }
        } else if let icon = spec.icon {
            properties["Icon"] = .string(icon)
        }
        if let rssi = device.reportedRSSI {
            properties["RSSI"] = .int16(rssi)
            if let txPower = spec.txPower { properties["TxPower"] = .int16(txPower) }
        }
        if !device.reportedManufacturerData.isEmpty {
            properties["ManufacturerData"] = Interfaces.manufacturerData(device.reportedManufacturerData)
        }
        if !device.reportedServiceData.isEmpty {
            properties["ServiceData"] = Interfaces.serviceData(device.reportedServiceData)
        }
        if options.experimental {
            properties["AdvertisingFlags"] = .bytes(spec.advertising.flags)
            let data = spec.advertising.data
            properties["AdvertisingData"] = .dictionary(
                key: .byte, value: .variant,
                data.keys.sorted().map { DictionaryEntry(.byte($0), .variant(.bytes(data[$0] ?? []))) })
        }
        return properties
    }

    /// The advertised service UUIDs, and once services are resolved the
    /// primary services too (bluetoothd merges both into `UUIDs`), sorted
    /// as bluetoothd's list is.
    func deviceUUIDs(_ device: DeviceState) -> [String] {
        var uuids = Set(device.spec.advertising.uuids.map(\.string))
        if device.servicesResolved || device.paired {
            // Generic Access is hidden from the objects but listed here.
            uuids.insert(GATTUUID(short: 0x1800).string)
            for service in device.database.services where service.spec.primary { uuids.insert(service.spec.uuid.string) }
        }
        return uuids.sorted()
    }

    /// Adds the Device1 object (InterfacesAdded); a paired device also gets
    /// its cached GATT objects, as bluetoothd keeps a bond's database.
    func export(_ device: DeviceState) {
        guard let interfaces, !device.exported else { return }
        do {
            try bus.objects.add(interfaces.device, at: device.path, properties: deviceProperties(device))
            device.exported = true
            if device.paired { exportGATT(device) }
        } catch {
            // The properties are built from validated scenario values.
            assertionFailure("cannot export \(device.path): \(error)")
        }
    }

    /// Removes the device object and everything beneath it, children first
    /// (InterfacesRemoved for each).
    func unexport(_ device: DeviceState) {
        guard device.exported else { return }
        unexportGATT(device)
        bus.objects.remove(at: device.path)
        device.exported = false
        device.reportedRSSI = nil
        device.reportedManufacturerData = [:]
        device.reportedServiceData = [:]
        endAcquiredSockets(device)
        device.notifySessions.removeAll()
        device.sightingGeneration &+= 1
    }

    func updateDevice(_ device: DeviceState, _ changes: [String: Value], emit: Bool = true) {
        guard device.exported else { return }
        try? bus.objects.update(changes, of: "org.bluez.Device1", at: device.path, emit: emit)
    }
}

extension SimulatorCore {
    static let batteryInterface: InterfaceName = "org.bluez.Battery1"
    static let batteryLevel = GATTUUID(short: 0x2a19)

    /// bluetoothd's battery plugin: once services are resolved, a device
    /// with a Battery Level gets org.bluez.Battery1 (`Percentage`), which
    /// follows the level's notifications.
    func exportBattery(_ device: DeviceState) {
        guard let index = device.database.characteristics.firstIndex(where: { $0.spec.uuid == Self.batteryLevel }),
            let level = device.characteristics[index].value.first
        else { return }
        let battery = ExportedInterface(Self.batteryInterface, properties: [.init("Percentage", .byte)])
        try? bus.objects.add(battery, at: device.path, properties: ["Percentage": .byte(level)])
    }

    func updateBattery(_ device: DeviceState, _ index: Int, _ value: [UInt8]) {
        guard device.database.characteristics[index].spec.uuid == Self.batteryLevel, let level = value.first,
            bus.objects.property("Percentage", of: Self.batteryInterface, at: device.path) != nil
        else { return }
        try? bus.objects.update(["Percentage": .byte(level)], of: Self.batteryInterface, at: device.path)
    }
}
