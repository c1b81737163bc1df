import DBus

/// bluetoothd's state of one adapter: power, and the clients discovering
/// through it with their filters.
final class AdapterState {
    let spec: Scenario.Adapter
    let path: ObjectPath
    var powered: Bool
    var alias: String?
    /// Clients that called StartDiscovery (and not StopDiscovery), by
    /// unique name.
    var discoveryClients: Set<BusName> = []
    /// Filters set with SetDiscoveryFilter, by client; they apply while the
    /// client discovers and are dropped when it leaves the bus.
    var filters: [BusName: DiscoveryFilter] = [:]
    /// Until when the scan is being restarted for a changed filter
    /// (`SimulatorOptions.scanRestartWindow`).
    var scanRestartEnds: ContinuousClock.Instant?

    init(spec: Scenario.Adapter, path: ObjectPath) {
        self.spec = spec
        self.path = path
        powered = spec.powered
        alias = spec.alias
    }

    var isDiscovering: Bool { !discoveryClients.isEmpty }

    /// Whether the kernel scans passively for an active advertisement
    /// monitor (`SimulatorCore+Monitor`).
    var passiveScanning = false

    /// Whether the adapter hears advertisements: discovering, or scanning
    /// passively for a monitor.
    var isListening: Bool { isDiscovering || passiveScanning }

    /// Whether any discovering client set a filter (bluetoothd's
    /// `filtered_discovery`): RSSI changes are then reported without the
    /// 8 dBm threshold.
    var isFilteredDiscovery: Bool { discoveryClients.contains { filters[$0] != nil } }

    /// Whether a report passes the merged filter: any discovering client
    /// without a filter, or whose filter matches (`is_filter_match`).
    func accepts(_ report: AdvertisingReport) -> Bool {
        discoveryClients.contains { client in filters[client]?.matches(report) ?? true }
    }

    /// Whether repeated advertising data is reported again: bluetoothd
    /// merges DuplicateData with OR over the discovering clients' filters;
    /// an unfiltered discovery reports only changes.
    var reportsDuplicates: Bool { discoveryClients.contains { filters[$0]?.duplicateData ?? false } }
}
