import DBus

/// `org.bluez.Device1` (doc/device-api.txt): property names and their
/// mapping onto `Device`.
enum Device1 {
    static let interface: InterfaceName = "org.bluez.Device1"

    /// The properties that come from advertising reports: a change to any of
    /// them is evidence that the device was heard during discovery.
    static let advertisementKeys: Set<String> = [
        "RSSI", "TxPower", "ManufacturerData", "ServiceData", "Name", "Appearance", "AdvertisingFlags",
        "AdvertisingData", "UUIDs",
    ]

    /// The properties only a received advertisement changes (not a GATT
    /// read of the name, nor services resolving): a change to one of them
    /// means the device was heard just now. With a discovery filter set (as
    /// the central always sets one) bluetoothd signals every change of RSSI
    /// (src/adapter.c `device_found`: `device_set_rssi_with_delta(dev, rssi,
    /// 0)`), and with `DuplicateData` every manufacturer and service data
    /// report.
    static let heardKeys: Set<String> = [
        "RSSI", "TxPower", "ManufacturerData", "ServiceData", "AdvertisingFlags", "AdvertisingData",
    ]

    /// A new device from the properties of `InterfacesAdded` or
    /// `GetManagedObjects`; nil without a valid `Address`.
    static func make(path: ObjectPath, properties: [String: Value]) -> Device? {
        let address =
            properties["Address"]?.string.flatMap(BluetoothAddress.init)
            ?? (try? BluetoothAddress(objectPathElement: String(path.lastElement)))
        guard let address else { return nil }
        let adapterPath = properties["Adapter"]?.objectPath ?? path.parent
        var device = Device(path: path, adapter: adapterPath.map { String($0.lastElement) } ?? "", address: address)
        apply(properties, to: &device)
        return device
    }

    static func apply(_ changed: [String: Value], invalidated: [String] = [], to device: inout Device) {
        for (key, value) in changed {
            switch key {
            case "Address": device.address = value.string.flatMap(BluetoothAddress.init) ?? device.address
            case "AddressType": device.addressType = value.string.flatMap(AddressType.init(rawValue:)) ?? .public
            case "Name": device.advertisement.localName = value.string
            case "Alias": device.alias = value.string
            case "Class": device.deviceClass = value.uint32
            case "Icon": device.icon = value.string
            case "Appearance": device.advertisement.appearance = value.uint16
            case "RSSI": device.advertisement.rssi = value.int16
            case "TxPower": device.advertisement.txPower = value.int16
            case "UUIDs": device.advertisement.serviceUUIDs = value.strings?.compactMap(BluetoothUUID.init) ?? []
            case "ManufacturerData": device.advertisement.manufacturerData = manufacturerData(value)
            case "ServiceData": device.advertisement.serviceData = serviceData(value)
            case "AdvertisingFlags": device.advertisement.flags = value.bytes
            case "AdvertisingData": device.advertisement.otherData = advertisingData(value)
            case "Connected": device.connected = value.bool ?? device.connected
            case "Paired": device.paired = value.bool ?? device.paired
            case "Bonded": device.bonded = value.bool ?? device.bonded
            case "Trusted": device.trusted = value.bool ?? device.trusted
            case "Blocked": device.blocked = value.bool ?? device.blocked
            case "ServicesResolved": device.servicesResolved = value.bool ?? device.servicesResolved
            default: break
            }
        }
        for key in invalidated {
            switch key {
            case "Name": device.advertisement.localName = nil
            case "Alias": device.alias = nil
            case "Appearance": device.advertisement.appearance = nil
            case "RSSI": device.advertisement.rssi = nil
            case "TxPower": device.advertisement.txPower = nil
            case "UUIDs": device.advertisement.serviceUUIDs = []
            case "ManufacturerData": device.advertisement.manufacturerData = [:]
            case "ServiceData": device.advertisement.serviceData = [:]
            case "AdvertisingFlags": device.advertisement.flags = nil
            case "AdvertisingData": device.advertisement.otherData = [:]
            case "Class": device.deviceClass = nil
            case "Icon": device.icon = nil
            default: break
            }
        }
    }

    /// `a{qv}`: company identifier -> bytes.
    static func manufacturerData(_ value: Value) -> [CompanyIdentifier: [UInt8]] {
        var result: [CompanyIdentifier: [UInt8]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let company = entry.key.uint16, let bytes = entry.value.bytes else { continue }
            result[CompanyIdentifier(company)] = bytes
        }
        return result
    }

    /// `a{yv}`: AD type -> bytes.
    static func advertisingData(_ value: Value) -> [UInt8: [UInt8]] {
        var result: [UInt8: [UInt8]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let type = entry.key.byte, let bytes = entry.value.bytes else { continue }
            result[type] = bytes
        }
        return result
    }

    /// `a{sv}`: service UUID -> bytes.
    static func serviceData(_ value: Value) -> [BluetoothUUID: [UInt8]] {
        var result: [BluetoothUUID: [UInt8]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let text = entry.key.string, let uuid = BluetoothUUID(text), let bytes = entry.value.bytes else {
                continue
            }
            result[uuid] = bytes
        }
        return result
    }
}
