import DBus

/// A GATT service of a connected device (`org.bluez.GattService1`), as a
/// snapshot of the mirror (`Central.services`).
///
/// Named by UUID and handle; its D-Bus object path stays inside this module.
public struct GATTService: Sendable, Hashable {
    /// The service's object path, for ordering and lookups in this module.
    var path: ObjectPath
    public var uuid: BluetoothUUID
    public var primary: Bool
    /// The attribute handle (`Handle`, BlueZ 5.48+), nil when not reported.
    public var handle: UInt16?
    /// The services this one includes (`Includes`), by UUID and handle.
    public var includedServices: [IncludedService]
    /// The characteristics, by handle.
    public var characteristics: [GATTCharacteristic]

    init(_ record: MirroredService, includedServices: [IncludedService], characteristics: [GATTCharacteristic]) {
        path = record.path
        uuid = record.uuid
        primary = record.primary
        handle = record.handle
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}

/// A service another includes (GATT "Include" declarations).
public struct IncludedService: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var handle: UInt16?

    public init(uuid: BluetoothUUID, handle: UInt16?) {
        self.uuid = uuid
        self.handle = handle
    }
}

/// A GATT characteristic (`org.bluez.GattCharacteristic1`), as a snapshot
/// of the mirror (`Central.services`, `Central.characteristic`).
///
/// Named by UUID and handle; its D-Bus object path stays inside this module.
public struct GATTCharacteristic: Sendable, Hashable {
    /// The characteristic's object path, for ordering and lookups in this
    /// module.
    var path: ObjectPath
    /// The UUID of the service holding it (nil if that service is gone).
    public var serviceUUID: BluetoothUUID?
    public var uuid: BluetoothUUID
    public var handle: UInt16?
    /// The properties and permissions BlueZ reports in `Flags`.
    public var properties: CharacteristicProperties
    /// Flags this version does not know, kept rather than dropped.
    public var unknownFlags: [String]
    /// The ATT MTU of the connection (`MTU`, BlueZ 5.62+).
    public var mtu: UInt16?
    /// Whether notifications or indications are on (for any client).
    public var notifying: Bool
    /// The cached value (`Value`): the last value read or notified.
    public var value: [UInt8]?
    /// The descriptors, by handle.
    public var descriptors: [GATTDescriptor]

    init(_ record: MirroredCharacteristic, serviceUUID: BluetoothUUID?, descriptors: [GATTDescriptor]) {
        path = record.path
        self.serviceUUID = serviceUUID
        uuid = record.uuid
        handle = record.handle
        properties = record.properties
        unknownFlags = record.unknownFlags
        mtu = record.mtu
        notifying = record.notifying
        value = record.value
        self.descriptors = descriptors
    }
}

/// A GATT descriptor (`org.bluez.GattDescriptor1`), as a snapshot of the
/// mirror.
///
/// Named by UUID and handle; its D-Bus object path stays inside this module.
public struct GATTDescriptor: Sendable, Hashable {
    /// The descriptor's object path, for ordering in this module.
    var path: ObjectPath
    public var uuid: BluetoothUUID
    public var handle: UInt16?
    public var flags: DescriptorFlags
    public var unknownFlags: [String]
    /// The cached value (`Value`).
    public var value: [UInt8]?

    init(_ record: MirroredDescriptor) {
        path = record.path
        uuid = record.uuid
        handle = record.handle
        flags = record.flags
        unknownFlags = record.unknownFlags
        value = record.value
    }
}
