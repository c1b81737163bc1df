import BlueZ

/// Where the fleet's presence comes from.
public enum PresenceSource: String, Sendable, CaseIterable {
    /// The gateway's scans: presence is published only while a client scans
    /// (or bluetoothd reports advertisements for another reason).
    case scans
    /// A passive scan the bridge holds while it runs: an advertisement
    /// monitor where bluetoothd runs with -E, else a low-duty discovery
    /// (`passiveFallback`). Presence then flows without any client scanning.
    case passive

    /// Every advertisement with a Flags structure (LE devices that are
    /// discoverable or connectable nearly all send one): its one byte is
    /// one of 0x00...0x1f, so 32 patterns catch them all.
    static let anyFlags: [AdvertisementPattern] = (0...0x1f).map {
        AdvertisementPattern(adType: 0x01, content: [UInt8($0)])
    }

    /// Without a monitor: active scans of 10 s every 40 s (a quarter of the
    /// airtime of a continuous scan), so that a device in range is heard
    /// again within the fleet's 60 s presence freshness.
    static let passiveFallback = LowDutyDiscovery(window: .seconds(10), period: .seconds(40))
}
