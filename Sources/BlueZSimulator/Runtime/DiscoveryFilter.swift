import DBus

/// One client's discovery filter (Adapter1.SetDiscoveryFilter), and the
/// matching rules bluetoothd applies to advertising reports
/// (`is_filter_match` in src/adapter.c).
struct DiscoveryFilter: Sendable, Equatable {
    var uuids: [GATTUUID] = []
    var rssi: Int16?
    var pathloss: UInt16?
    var transport = "auto"
    var duplicateData = true
    var discoverable = false
    var pattern: String?

    /// Parses the `a{sv}` argument; any unknown key or wrong type is
    /// InvalidArguments, as bluetoothd's `parse_discovery_filter_dict`.
    init(_ dictionary: [String: Value]) throws(DBusError) {
        for (key, value) in dictionary {
            switch (key, value) {
            case ("UUIDs", _):
                guard let strings = value.strings else { throw BluetoothdError.invalidArguments() }
                uuids = try strings.map { text throws(DBusError) in
                    guard let uuid = GATTUUID(text) else { throw BluetoothdError.invalidArguments() }
                    return uuid
                }
            case ("RSSI", .int16(let threshold)):
                rssi = threshold
            case ("Pathloss", .uint16(let loss)):
                pathloss = loss
            case ("Transport", .string(let text)):
                guard ["auto", "bredr", "le"].contains(text) else { throw BluetoothdError.invalidArguments() }
                transport = text
            case ("DuplicateData", .boolean(let flag)):
                duplicateData = flag
            case ("Discoverable", .boolean(let flag)):
                discoverable = flag
            case ("Pattern", .string(let text)):
                pattern = text
            default:
                throw BluetoothdError.invalidArguments()
            }
        }
        // bluetoothd refuses RSSI and Pathloss together.
        if rssi != nil && pathloss != nil { throw BluetoothdError.invalidArguments() }
    }

    /// Whether an advertisement passes this filter.
    func matches(_ report: AdvertisingReport) -> Bool {
        if transport == "bredr" { return false }
        if !uuids.isEmpty, !uuids.contains(where: report.uuids.contains) { return false }
        if let rssi, report.rssi < rssi { return false }
        if let pathloss {
            guard let txPower = report.txPower, Int(txPower) - Int(report.rssi) <= Int(pathloss) else { return false }
        }
        if discoverable, (report.flags.first ?? 0) & 0x03 == 0 { return false }
        if let pattern, !pattern.isEmpty {
            guard report.address.description.hasPrefix(pattern) || (report.name?.hasPrefix(pattern) ?? false)
            else { return false }
        }
        return true
    }
}

/// What one advertisement carries, as the adapter receives it.
struct AdvertisingReport {
    var address: DeviceAddress
    var name: String?
    var rssi: Int16
    var txPower: Int16?
    var uuids: [GATTUUID]
    var flags: [UInt8]
}
