/// What a device advertises, as BlueZ's `Device1` properties carry it.
///
/// BlueZ merges advertising reports and scan responses into the device's
/// properties and keeps them after the device stops advertising, except RSSI
/// and TX power, which it invalidates when discovery stops
/// (`invalidate_rssi_and_tx_power` in src/adapter.c).
public struct AdvertisementData: Sendable, Hashable {
    /// The advertised local name (`Name`).
    public var localName: String?
    /// The last received signal strength in dBm (`RSSI`). The value 127 means
    /// "not available" (Core Specification, HCI LE Advertising Report);
    /// emulated controllers always report it. See `signalStrength`.
    public var rssi: Int16?
    /// The advertised transmit power in dBm (`TxPower`).
    public var txPower: Int16?
    /// Manufacturer-specific data by company identifier (`ManufacturerData`).
    public var manufacturerData: [CompanyIdentifier: [UInt8]] = [:]
    /// Service data by service UUID (`ServiceData`).
    public var serviceData: [BluetoothUUID: [UInt8]] = [:]
    /// Service UUIDs (`UUIDs`): the advertised ones, and once the device's
    /// services are resolved, those of its GATT database as well.
    public var serviceUUIDs: [BluetoothUUID] = []
    /// The GAP appearance (`Appearance`).
    public var appearance: UInt16?
    /// The advertising flags byte(s) (`AdvertisingFlags`, experimental in
    /// BlueZ 5.66: served only by `bluetoothd -E`).
    public var flags: [UInt8]?
    /// The AD structures bluetoothd does not parse into a property of its
    /// own, by AD type (`AdvertisingData`, experimental in 5.66 like
    /// `flags`). bluetoothd keeps here every type other than flags, service
    /// UUIDs, names, TX power, class, appearance, pairing hashes, device id,
    /// service and manufacturer data (src/eir.c `eir_parse`), e.g. URI
    /// (0x24), Transport Discovery (0x26) or the mesh types; it signals a
    /// change only for Transport Discovery Data (src/device.c `add_data`).
    public var otherData: [UInt8: [UInt8]] = [:]

    public init() {}

    /// The RSSI, or nil when it is absent or 127 ("not available").
    public var signalStrength: Int16? {
        guard let rssi, rssi != 127 else { return nil }
        return rssi
    }

    /// Whether the data other than RSSI equals `other`'s: a discovery
    /// session without duplicates reports a device again only when this
    /// changes.
    func sameContent(as other: AdvertisementData) -> Bool {
        localName == other.localName && txPower == other.txPower && manufacturerData == other.manufacturerData
            && serviceData == other.serviceData && serviceUUIDs == other.serviceUUIDs
            && appearance == other.appearance && flags == other.flags && otherData == other.otherData
    }
}
