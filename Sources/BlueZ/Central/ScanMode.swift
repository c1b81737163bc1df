/// How a discovery session hears advertisements.
public enum ScanMode: Sendable, Hashable {
    /// bluetoothd's discovery (`StartDiscovery`): an active scan, with
    /// scan requests to every scannable advertiser, while the session runs.
    case active
    /// Listening without a discovery session of our own: an advertisement
    /// monitor (`AdvertisementMonitorManager1.RegisterMonitor`, offered
    /// only by a bluetoothd started with `-E`), which makes the kernel scan
    /// passively (no scan requests, so no scan response data: a name sent
    /// only in a scan response stays unknown) and report the devices whose
    /// advertisements match one of the patterns. When bluetoothd offers no
    /// monitor on the adapter, `fallback` (if given) scans in short active
    /// windows instead; without one the session fails `.notSupported`.
    case passive(patterns: [AdvertisementPattern], fallback: LowDutyDiscovery? = nil)

    /// A name for logs and the API: `active`, `passive`.
    public var name: String {
        switch self {
        case .active: "active"
        case .passive: "passive"
        }
    }
}

/// Presence without an advertisement monitor: bluetoothd's discovery run for
/// `window` out of every `period`. While a window is open it is an ordinary
/// active scan (radio receiving all the time, a scan request to each
/// scannable advertiser); between windows the radio rests. A device is heard
/// at the latest `period` after it appears (if it advertises during the
/// next window), so a presence timeout below `period` would report every
/// device lost between windows.
public struct LowDutyDiscovery: Sendable, Hashable {
    public var window: Duration
    public var period: Duration

    /// 10 s out of every 60 s: a sixth of an active scan's airtime, and long
    /// enough windows for bluetoothd's scan cycle (in the VM rig btvirt
    /// reports once per scan start, about every 10 s).
    public init(window: Duration = .seconds(10), period: Duration = .seconds(60)) {
        self.window = window
        self.period = max(period, window)
    }

    /// The fraction of the time it scans.
    public var dutyCycle: Double { window / period }
}
