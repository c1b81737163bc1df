import Foundation

/// A service to publish with `CBPeripheralManager.add(_:)`.
public class CBMutableService: CBService, @unchecked Sendable {
    public init(type UUID: CBUUID, primary isPrimary: Bool) {
        super.init(uuid: UUID, isPrimary: isPrimary, peripheral: nil)
    }

    public override var characteristics: [CBCharacteristic]? {
        get { discoveredCharacteristics }
        set { discoveredCharacteristics = newValue }
    }

    public override var includedServices: [CBService]? {
        get { discoveredIncludedServices }
        set { discoveredIncludedServices = newValue }
    }
}

/// A characteristic to publish. A `value` makes it read-only and answered
/// by the gateway from that value; without one, every read and write goes
/// to the delegate (`didReceiveRead`, `didReceiveWrite`), as Core Bluetooth
/// does.
public class CBMutableCharacteristic: CBCharacteristic, @unchecked Sendable {
    public var permissions: CBAttributePermissions
    /// The centrals subscribed to it now.
    public internal(set) var subscribedCentrals: [CBCentral]? = []

    public init(type UUID: CBUUID, properties: CBCharacteristicProperties, value: Data?, permissions: CBAttributePermissions) {
        self.permissions = permissions
        super.init(uuid: UUID, properties: properties, value: value, service: nil)
    }

    public override var properties: CBCharacteristicProperties {
        get { characteristicProperties }
        set { characteristicProperties = newValue }
    }

    public override var value: Data? {
        get { currentValue }
        set { currentValue = newValue }
    }

    public override var descriptors: [CBDescriptor]? {
        get { discoveredDescriptors }
        set { discoveredDescriptors = newValue }
    }

    /// BlueZ's flags for the properties and permissions.
    var bluezFlags: [String] {
        var flags = properties.subtracting([.notifyEncryptionRequired, .indicateEncryptionRequired]).bluezFlags
        if properties.contains(.notifyEncryptionRequired) { flags.append(contentsOf: ["notify", "encrypt-notify"]) }
        if properties.contains(.indicateEncryptionRequired) { flags.append(contentsOf: ["indicate", "encrypt-indicate"]) }
        if permissions.contains(.readEncryptionRequired) { flags.append("encrypt-read") }
        if permissions.contains(.writeEncryptionRequired) { flags.append("encrypt-write") }
        var seen = Set<String>()
        return flags.filter { seen.insert($0).inserted }
    }
}

/// A descriptor to publish: a user description (2901, a `String`) or
/// another descriptor with `Data`. bluetoothd adds 2902 itself.
public class CBMutableDescriptor: CBDescriptor, @unchecked Sendable {
    public init(type UUID: CBUUID, value: Any?) {
        super.init(uuid: UUID, value: value, characteristic: nil)
    }

    /// The bytes it holds.
    var bytes: Data {
        switch currentValue {
        case let data as Data: data
        case let text as String: Data(text.utf8)
        case let number as NSNumber: Data([UInt8(truncatingIfNeeded: number.intValue), UInt8(truncatingIfNeeded: number.intValue >> 8)])
        default: Data()
        }
    }
}
