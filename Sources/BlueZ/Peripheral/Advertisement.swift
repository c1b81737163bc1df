/// An advertisement the gateway broadcasts (`org.bluez.LEAdvertisement1`,
/// doc/org.bluez.LEAdvertisement.rst), registered with
/// `LEAdvertisingManager1.RegisterAdvertisement`.
public struct Advertisement: Sendable, Hashable {
    /// `peripheral` (connectable) or `broadcast` (not connectable).
    public var type: Kind
    public var localName: String?
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    public var appearance: UInt16?
    public var discoverable: Bool?
    /// Whether bluetoothd adds the adapter's TX power level (`Includes`).
    public var includeTxPower: Bool
    /// The requested TX power in dBm (`TxPower`, -127 to 20).
    public var txPower: Int16?
    /// The advertising interval bounds in milliseconds (20 to 10485).
    public var minInterval: UInt32?
    public var maxInterval: UInt32?

    public enum Kind: String, Sendable, Hashable {
        case peripheral, broadcast
    }

    public init(
        type: Kind = .peripheral, localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [BluetoothUUID: [UInt8]] = [:],
        appearance: UInt16? = nil, discoverable: Bool? = nil, includeTxPower: Bool = false, txPower: Int16? = nil,
        minInterval: UInt32? = nil, maxInterval: UInt32? = nil
    ) {
        self.type = type
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.appearance = appearance
        self.discoverable = discoverable
        self.includeTxPower = includeTxPower
        self.txPower = txPower
        self.minInterval = minInterval
        self.maxInterval = maxInterval
    }

    /// The most bytes of legacy advertising data (and of scan response
    /// data) a controller takes (Core Specification Vol 6, Part B, 2.3.1).
    public static let maximumDataLength = 31
    /// The error name `validate` gives data or a name that does not fit
    /// (what bluetoothd would refuse, with a vaguer "Failed").
    public static let tooLongErrorName = "org.bluez.Error.InvalidLength"

    /// The bytes the advertising data takes, as bluetoothd builds it: the
    /// Flags bluetoothd adds, service UUIDs, manufacturer and service
    /// data, appearance and TX power. The local name goes into the scan
    /// response (`localNameLength`).
    public var dataLength: Int {
        var length = 3
        let uuids16 = serviceUUIDs.filter { $0.assignedNumber.map { $0 <= 0xFFFF } ?? false }
        let uuids32 = serviceUUIDs.filter { $0.assignedNumber.map { $0 > 0xFFFF } ?? false }
        let uuids128 = serviceUUIDs.count - uuids16.count - uuids32.count
        if !uuids16.isEmpty { length += 2 + 2 * uuids16.count }
        if !uuids32.isEmpty { length += 2 + 4 * uuids32.count }
        if uuids128 > 0 { length += 2 + 16 * uuids128 }
        for data in manufacturerData.values { length += 2 + 2 + data.count }
        for (uuid, data) in serviceData { length += 2 + Self.serviceDataUUIDLength(uuid) + data.count }
        if appearance != nil { length += 4 }
        if includeTxPower { length += 3 }
        return length
    }

    /// The bytes the local name takes in the scan response.
    public var localNameLength: Int { localName.map { 2 + $0.utf8.count } ?? 0 }

    private static func serviceDataUUIDLength(_ uuid: BluetoothUUID) -> Int {
        guard let number = uuid.assignedNumber else { return 16 }
        return number <= 0xFFFF ? 2 : 4
    }

    /// Checks what the controller or bluetoothd would refuse: data longer
    /// than 31 bytes, intervals out of range or reversed, a TX power out of
    /// range. bluetoothd itself only reports "Failed to register
    /// advertisement" for data too long, so the gateway says why first.
    public func validate() throws(BlueZError) {
        if dataLength > Self.maximumDataLength {
            throw BlueZError(
                .invalidArguments,
                "the advertising data takes \(dataLength) bytes (Flags included); at most \(Self.maximumDataLength) fit",
                dbusName: Self.tooLongErrorName)
        }
        if localNameLength > Self.maximumDataLength {
            throw BlueZError(
                .invalidArguments,
                "the local name takes \(localNameLength) bytes of the scan response; at most \(Self.maximumDataLength) fit",
                dbusName: Self.tooLongErrorName)
        }
        for interval in [minInterval, maxInterval].compactMap({ $0 }) where !(20...10_485).contains(interval) {
            throw BlueZError(.invalidArguments, "an advertising interval is 20 to 10485 ms, not \(interval)")
        }
        if let minInterval, let maxInterval, minInterval > maxInterval {
            throw BlueZError(.invalidArguments, "the minimum interval \(minInterval) ms exceeds the maximum \(maxInterval) ms")
        }
        if let txPower, !(-127...20).contains(txPower) {
            throw BlueZError(.invalidArguments, "the TX power is -127 to 20 dBm, not \(txPower)")
        }
    }
}
