import DBus

/// `org.bluez.GattCharacteristic1` (doc/gatt-api.txt).
enum GattCharacteristic1 {
    static let interface: InterfaceName = "org.bluez.GattCharacteristic1"

    static func make(path: ObjectPath, properties: [String: Value]) -> MirroredCharacteristic? {
        guard let uuid = properties["UUID"]?.string.flatMap(BluetoothUUID.init),
            let service = properties["Service"]?.objectPath ?? path.parent
        else { return nil }
        var characteristic = MirroredCharacteristic(path: path, servicePath: service, uuid: uuid)
        characteristic.handle = handle(fromPath: path)
        apply(properties, to: &characteristic)
        return characteristic
    }

    static func apply(_ changed: [String: Value], invalidated: [String] = [], to characteristic: inout MirroredCharacteristic) {
        for (key, value) in changed {
            switch key {
            case "Value": characteristic.value = value.bytes
            case "Handle": characteristic.handle = value.uint16
            case "MTU": characteristic.mtu = value.uint16
            case "Notifying": characteristic.notifying = value.bool ?? characteristic.notifying
            case "NotifyAcquired": characteristic.offersAcquireNotify = true
            case "Flags":
                let parsed = CharacteristicProperties.parse(bluezFlags: value.strings ?? [])
                characteristic.properties = parsed.flags
                characteristic.unknownFlags = parsed.unknown
            default: break
            }
        }
        if invalidated.contains("Value") { characteristic.value = nil }
    }

    /// The options of `ReadValue` (doc/gatt-api.txt): `offset`.
    static func readOptions(offset: UInt16) -> Value {
        offset == 0 ? .vardict([:]) : .vardict(["offset": .uint16(offset)])
    }

    /// The options of `WriteValue`: `type` (`request`, `command`,
    /// `reliable`) and `offset`.
    static func writeOptions(type: WriteType, offset: UInt16) -> Value {
        var options: [String: Value] = ["type": .string(type.rawValue)]
        if offset != 0 { options["offset"] = .uint16(offset) }
        return .vardict(options)
    }
}
