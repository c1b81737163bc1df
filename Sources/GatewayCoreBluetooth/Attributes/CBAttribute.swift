import Foundation

/// A service, characteristic or descriptor, named by its UUID.
///
/// `@unchecked Sendable`: attributes of a remote peripheral are changed
/// only on their manager's queue (where their delegate reads them), those
/// of a published service by their owner before `add(_:)`, as with Core
/// Bluetooth, whose attributes are not thread-safe either.
public class CBAttribute: NSObject, @unchecked Sendable {
    public let uuid: CBUUID

    init(uuid: CBUUID) {
        self.uuid = uuid
        super.init()
    }

    public override var description: String { "<\(type(of: self)) \(uuid.uuidString)>" }
}

/// A GATT service.
public class CBService: CBAttribute, @unchecked Sendable {
    public internal(set) weak var peripheral: CBPeripheral?
    public internal(set) var isPrimary: Bool
    var discoveredCharacteristics: [CBCharacteristic]?
    var discoveredIncludedServices: [CBService]?
    /// Every characteristic the gateway listed, before `discoverCharacteristics` chose.
    var knownCharacteristics: [CBCharacteristic] = []
    /// The ATT handle, which names the service's attributes without ambiguity.
    var handle: Int?

    init(uuid: CBUUID, isPrimary: Bool, peripheral: CBPeripheral?) {
        self.isPrimary = isPrimary
        self.peripheral = peripheral
        super.init(uuid: uuid)
    }

    /// The characteristics discovered so far (nil before `discoverCharacteristics`).
    public var characteristics: [CBCharacteristic]? { discoveredCharacteristics }
    public var includedServices: [CBService]? { discoveredIncludedServices }
}

/// A GATT characteristic.
public class CBCharacteristic: CBAttribute, @unchecked Sendable {
    public internal(set) weak var service: CBService?
    var characteristicProperties: CBCharacteristicProperties
    var currentValue: Data?
    var discoveredDescriptors: [CBDescriptor]?
    var knownDescriptors: [CBDescriptor] = []
    public internal(set) var isNotifying = false
    var handle: Int?

    init(uuid: CBUUID, properties: CBCharacteristicProperties, value: Data?, service: CBService?) {
        characteristicProperties = properties
        currentValue = value
        self.service = service
        super.init(uuid: uuid)
    }

    public var properties: CBCharacteristicProperties { characteristicProperties }
    /// The last value read or notified.
    public var value: Data? { currentValue }
    public var descriptors: [CBDescriptor]? { discoveredDescriptors }

    /// The path segment that names it on the gateway: its handle when known.
    var gatewayName: String { handle.map { "handle:\($0)" } ?? uuid.gatewayString }
}

/// A GATT descriptor.
public class CBDescriptor: CBAttribute, @unchecked Sendable {
    public internal(set) weak var characteristic: CBCharacteristic?
    var currentValue: Any?
    var handle: Int?

    init(uuid: CBUUID, value: Any?, characteristic: CBCharacteristic?) {
        currentValue = value
        self.characteristic = characteristic
        super.init(uuid: uuid)
    }

    /// The last value read: `Data`, or `String` for a user description
    /// (2901) and `NSNumber` for a client configuration (2902), as Core
    /// Bluetooth gives them.
    public var value: Any? { currentValue }

    static func value(_ data: Data, of uuid: CBUUID) -> Any {
        switch uuid.uuidString {
        case CBUUIDCharacteristicUserDescriptionString: String(decoding: data, as: UTF8.self)
        case CBUUIDClientCharacteristicConfigurationString, CBUUIDCharacteristicExtendedPropertiesString,
            CBUUIDServerCharacteristicConfigurationString:
            NSNumber(value: data.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) })
        default: data
        }
    }
}
