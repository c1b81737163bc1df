/// What one discovery session wants to see. Every condition given must
/// hold; an empty filter matches every device.
public struct DiscoveryFilter: Sendable, Hashable {
    /// Devices advertising at least one of these services (in `UUIDs` or
    /// `ServiceData`); empty for any.
    public var serviceUUIDs: [BluetoothUUID]
    /// Devices whose advertised name is exactly this.
    public var name: String?
    /// Devices whose advertised name starts with this.
    public var namePrefix: String?
    /// Devices heard at least this loud (dBm). An RSSI of 127 ("not
    /// available", as emulated controllers report) passes, as it does in
    /// bluetoothd's own filter.
    public var minimumRSSI: Int16?
    /// Devices with manufacturer data of this company.
    public var manufacturerID: UInt16?
    /// Every advertisement (true), or one event per device and again only
    /// when its advertisement data changes (false).
    public var allowDuplicates: Bool
    /// The device with this address only (bluetoothd is not told: the
    /// session filters).
    public var address: BluetoothAddress?
    /// Devices whose address starts with these hex digits (uppercase,
    /// without separators: `C47C` for `C4:7C:...`); the session filters.
    public var addressPrefix: String?
    /// Devices with service data of at least one of these UUIDs; empty for
    /// any. The session filters (bluetoothd's `UUIDs` filter also passes
    /// devices that only list the UUID).
    public var serviceDataUUIDs: [BluetoothUUID] = []
    /// At most one `.updated` per device in this interval; the reports in
    /// between are dropped (the next one after it carries the latest data).
    public var minimumUpdateInterval: Duration?
    /// A device not heard for this long is reported `.silent`, although
    /// bluetoothd may keep listing it (it removes a temporary device only
    /// TemporaryTimeout after it was last heard, and a paired one never);
    /// heard again, it is `.discovered` again. Nil: only bluetoothd's
    /// removal ends a device's presence.
    public var presenceTimeout: Duration?
    /// Smooths the RSSI of each device with an exponential moving average:
    /// the weight of the newest report, from 0 (exclusive) to 1. The result
    /// is `Device.smoothedRSSI` in this session's events.
    public var rssiSmoothing: Double?

    public init(
        serviceUUIDs: [BluetoothUUID] = [], name: String? = nil, namePrefix: String? = nil,
        minimumRSSI: Int16? = nil, manufacturerID: UInt16? = nil, allowDuplicates: Bool = false,
        address: BluetoothAddress? = nil
    ) {
        self.address = address
        self.serviceUUIDs = serviceUUIDs
        self.name = name
        self.namePrefix = namePrefix
        self.minimumRSSI = minimumRSSI
        self.manufacturerID = manufacturerID
        self.allowDuplicates = allowDuplicates
    }

    /// Whether `device`, as the mirror shows it now, passes the filter.
    public func matches(_ device: Device) -> Bool {
        let advertisement = device.advertisement
        if let address, device.address != address { return false }
        if let addressPrefix, !device.address.hexDigits.hasPrefix(addressPrefix) { return false }
        if !serviceDataUUIDs.isEmpty, !serviceDataUUIDs.contains(where: { advertisement.serviceData[$0] != nil }) {
            return false
        }
        if !serviceUUIDs.isEmpty {
            let advertised = Set(advertisement.serviceUUIDs).union(advertisement.serviceData.keys)
            guard serviceUUIDs.contains(where: advertised.contains) else { return false }
        }
        if let name, advertisement.localName != name { return false }
        if let namePrefix, !(advertisement.localName ?? "").hasPrefix(namePrefix) { return false }
        if let minimumRSSI {
            guard let rssi = advertisement.rssi, rssi == 127 || rssi >= minimumRSSI else { return false }
        }
        if let manufacturerID, advertisement.manufacturerData[CompanyIdentifier(manufacturerID)] == nil {
            return false
        }
        return true
    }
}

/// The filter the central gives bluetoothd (`SetDiscoveryFilter`) while
/// several sessions scan one adapter: loose enough for every session; each
/// session then applies its own filter.
struct MergedDiscoveryFilter: Sendable, Hashable {
    /// Empty when any session wants every device.
    var serviceUUIDs: [BluetoothUUID] = []
    /// The lowest floor, or nil when any session has none.
    var rssi: Int16?
    /// Whether any session wants every advertisement.
    var duplicateData = false
    /// LE only: the central's business is GATT.
    var transport = "le"

    init(merging filters: some Collection<DiscoveryFilter>) {
        if !filters.isEmpty, filters.allSatisfy({ !$0.serviceUUIDs.isEmpty }) {
            serviceUUIDs = Set(filters.flatMap(\.serviceUUIDs)).sorted { $0.rawValue < $1.rawValue }
        }
        let floors = filters.map(\.minimumRSSI)
        if !floors.isEmpty, !floors.contains(nil) { rssi = floors.compactMap { $0 }.min() }
        duplicateData = filters.contains { $0.allowDuplicates }
    }
}

extension BluetoothAddress {
    /// The 12 uppercase hex digits, without separators (for prefixes).
    var hexDigits: String { formatted(separator: "") }
}
