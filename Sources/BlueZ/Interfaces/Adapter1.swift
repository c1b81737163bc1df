import DBus

/// `org.bluez.Adapter1` (doc/adapter-api.txt): property names and their
/// mapping onto `Adapter`.
enum Adapter1 {
    static let interface: InterfaceName = "org.bluez.Adapter1"

    /// Applies changed and invalidated properties to `adapter`. Unknown
    /// properties and values of an unexpected type are ignored, so a newer
    /// bluetoothd cannot break the mirror.
    static func apply(_ changed: [String: Value], invalidated: [String] = [], to adapter: inout Adapter) {
        for (key, value) in changed {
            switch key {
            case "Address": adapter.address = value.string.flatMap(BluetoothAddress.init)
            case "AddressType": adapter.addressType = value.string.flatMap(AddressType.init(rawValue:))
            case "Name": adapter.name = value.string
            case "Alias": adapter.alias = value.string
            case "Powered": adapter.powered = value.bool ?? adapter.powered
            case "PowerState": adapter.powerState = value.string
            case "Discoverable": adapter.discoverable = value.bool ?? adapter.discoverable
            case "Pairable": adapter.pairable = value.bool ?? adapter.pairable
            case "Discovering": adapter.discovering = value.bool ?? adapter.discovering
            case "UUIDs": adapter.uuids = value.strings?.compactMap(BluetoothUUID.init) ?? []
            default: break
            }
        }
        for key in invalidated {
            switch key {
            case "Name": adapter.name = nil
            case "Alias": adapter.alias = nil
            case "PowerState": adapter.powerState = nil
            case "UUIDs": adapter.uuids = []
            default: break
            }
        }
    }

    /// The discovery filter of `SetDiscoveryFilter` (doc/adapter-api.txt):
    /// `UUIDs`, `RSSI`, `Transport`, `DuplicateData`.
    static func filterArgument(_ filter: MergedDiscoveryFilter) -> Value {
        var dictionary: [String: Value] = ["Transport": .string(filter.transport)]
        if !filter.serviceUUIDs.isEmpty {
            dictionary["UUIDs"] = .strings(filter.serviceUUIDs.map(\.uuidString))
        }
        if let rssi = filter.rssi { dictionary["RSSI"] = .int16(rssi) }
        dictionary["DuplicateData"] = .boolean(filter.duplicateData)
        return .vardict(dictionary)
    }
}
