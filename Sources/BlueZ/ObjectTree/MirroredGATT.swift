import DBus

// The mirror's records of bluetoothd's GATT objects, keyed by object path in
// `ObjectTree`. Callers get snapshots instead (`GATTService`,
// `GATTCharacteristic`, `GATTDescriptor`), which name attributes by UUID and
// handle and carry what a snapshot assembles (a service's characteristics,
// a characteristic's service UUID and descriptors).

/// An `org.bluez.GattService1` object.
struct MirroredService: Sendable, Hashable {
    var path: ObjectPath
    /// The device's object path (`Device`).
    var devicePath: ObjectPath
    var uuid: BluetoothUUID
    var primary = true
    /// The attribute handle (`Handle`, BlueZ 5.48+), nil when not reported.
    var handle: UInt16?
    /// The paths of included services (`Includes`).
    var includes: [ObjectPath] = []
}

/// An `org.bluez.GattCharacteristic1` object.
struct MirroredCharacteristic: Sendable, Hashable {
    var path: ObjectPath
    /// The service's object path (`Service`).
    var servicePath: ObjectPath
    var uuid: BluetoothUUID
    var handle: UInt16?
    var properties: CharacteristicProperties = []
    var unknownFlags: [String] = []
    var mtu: UInt16?
    var notifying = false
    /// BlueZ offers `AcquireNotify` (`NotifyAcquired` is present).
    var offersAcquireNotify = false
    var value: [UInt8]?
}

/// An `org.bluez.GattDescriptor1` object.
struct MirroredDescriptor: Sendable, Hashable {
    var path: ObjectPath
    /// The characteristic's object path (`Characteristic`).
    var characteristicPath: ObjectPath
    var uuid: BluetoothUUID
    var handle: UInt16?
    var flags: DescriptorFlags = []
    var unknownFlags: [String] = []
    var value: [UInt8]?
}
