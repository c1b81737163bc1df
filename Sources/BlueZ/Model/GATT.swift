import DBus

/// A GATT service of a connected device (`org.bluez.GattService1`).
public struct GATTService: Sendable, Hashable {
    public var path: ObjectPath
    /// The device's object path (`Device`).
    public var devicePath: ObjectPath
    public var uuid: BluetoothUUID
    public var primary = true
    /// The attribute handle (`Handle`, BlueZ 5.48+), nil when not reported.
    public var handle: UInt16?
    /// The paths of included services (`Includes`).
    public var includes: [ObjectPath] = []
    /// In a tree snapshot (`Central.services`): the characteristics, by
    /// handle. Empty in the mirror itself.
    public var characteristics: [GATTCharacteristic] = []

    public init(path: ObjectPath, devicePath: ObjectPath, uuid: BluetoothUUID) {
        self.path = path
        self.devicePath = devicePath
        self.uuid = uuid
    }
}

/// A GATT characteristic (`org.bluez.GattCharacteristic1`).
public struct GATTCharacteristic: Sendable, Hashable {
    public var path: ObjectPath
    /// The service's object path (`Service`).
    public var servicePath: ObjectPath
    public var uuid: BluetoothUUID
    public var handle: UInt16?
    /// The properties and permissions BlueZ reports in `Flags`.
    public var properties: CharacteristicProperties = []
    /// Flags this version does not know, kept rather than dropped.
    public var unknownFlags: [String] = []
    /// The ATT MTU of the connection (`MTU`, BlueZ 5.62+).
    public var mtu: UInt16?
    /// Whether notifications or indications are on (for any client).
    public var notifying = false
    /// BlueZ offers `AcquireNotify` (`NotifyAcquired` is present).
    public var offersAcquireNotify = false
    /// The cached value (`Value`): the last value read or notified.
    public var value: [UInt8]?
    /// In a tree snapshot: the descriptors, by handle.
    public var descriptors: [GATTDescriptor] = []

    public init(path: ObjectPath, servicePath: ObjectPath, uuid: BluetoothUUID) {
        self.path = path
        self.servicePath = servicePath
        self.uuid = uuid
    }
}

/// A GATT descriptor (`org.bluez.GattDescriptor1`).
public struct GATTDescriptor: Sendable, Hashable {
    public var path: ObjectPath
    /// The characteristic's object path (`Characteristic`).
    public var characteristicPath: ObjectPath
    public var uuid: BluetoothUUID
    public var handle: UInt16?
    public var flags: DescriptorFlags = []
    public var unknownFlags: [String] = []
    /// The cached value (`Value`).
    public var value: [UInt8]?

    public init(path: ObjectPath, characteristicPath: ObjectPath, uuid: BluetoothUUID) {
        self.path = path
        self.characteristicPath = characteristicPath
        self.uuid = uuid
    }
}
