import DBus

/// Advertisement monitors registered with the simulated bluetoothd
/// (`AdvertisementMonitorManager1`, served with `SimulatorOptions.experimental`
/// as bluetoothd -E serves it): one application per client and root path,
/// each with the monitors bluetoothd activated.
struct MonitorRegistry {
    struct Key: Hashable {
        var owner: BusName
        var root: ObjectPath
    }

    /// One `or_patterns` pattern: AD type, start, content.
    struct Pattern: Equatable {
        var start: Int
        var adType: UInt8
        var content: [UInt8]

        /// Whether an AD structure of the advertisement holds the content
        /// at the start (src/shared/ad.c, `pattern_match`).
        func matches(_ structures: [(UInt8, [UInt8])]) -> Bool {
            structures.contains { type, data in
                type == adType && data.count >= start + content.count
                    && Array(data[start..<start + content.count]) == content
            }
        }
    }

    struct Application {
        let adapter: String
        /// Activated monitors by path, with their patterns.
        var monitors: [ObjectPath: [Pattern]] = [:]
        /// Follows the application's InterfacesAdded / InterfacesRemoved.
        var watch: Task<Void, Never>?
    }

    var applications: [Key: Application] = [:]

    /// How many monitors are active on an adapter (its passive scan runs
    /// while there is one).
    func activeMonitors(on adapter: String) -> Int {
        applications.values.filter { $0.adapter == adapter }.reduce(0) { $0 + $1.monitors.count }
    }

    /// The monitors of an adapter whose patterns match an advertisement.
    func matching(_ structures: [(UInt8, [UInt8])], on adapter: String) -> [(Key, ObjectPath)] {
        var found: [(Key, ObjectPath)] = []
        for (key, application) in applications where application.adapter == adapter {
            for (path, patterns) in application.monitors where patterns.contains(where: { $0.matches(structures) }) {
                found.append((key, path))
            }
        }
        return found.sorted { $0.1.rawValue < $1.1.rawValue }
    }

    /// Why bluetoothd 5.66 refuses a monitor's properties (it releases
    /// it), or its patterns. Seen in the VM rig (docs/simulator.md): no or
    /// empty Patterns, a type other than or_patterns, RSSILowThreshold
    /// above RSSIHighThreshold, a threshold above 20 (127 is unset), a
    /// timeout above 300, a 32-byte pattern, AD type 0 (and, unobserved,
    /// AD types above 0x3d but 0xff).
    static func parse(_ properties: [String: Value]) -> [Pattern]? {
        guard properties["Type"]?.string == "or_patterns" else { return nil }
        let low = properties["RSSILowThreshold"]?.int16 ?? 127
        let high = properties["RSSIHighThreshold"]?.int16 ?? 127
        for threshold in [low, high] where threshold != 127 && !(-127...20).contains(threshold) { return nil }
        if low != 127, high != 127, low > high { return nil }
        for name in ["RSSILowTimeout", "RSSIHighTimeout"] {
            if let timeout = properties[name]?.uint16, timeout > 300 { return nil }
        }
        if let period = properties["RSSISamplingPeriod"]?.uint16, period > 255 { return nil }
        guard let entries = properties["Patterns"]?.array, !entries.isEmpty else { return nil }
        var patterns: [Pattern] = []
        for entry in entries {
            guard let fields = entry.fields, fields.count == 3, let start = fields[0].byte, let type = fields[1].byte,
                let content = fields[2].bytes, !content.isEmpty, content.count <= 31,
                type != 0, type <= 0x3d || type == 0xff
            else { return nil }
            patterns.append(Pattern(start: Int(start), adType: type, content: content))
        }
        return patterns
    }
}
