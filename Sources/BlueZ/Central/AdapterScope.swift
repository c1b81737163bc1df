import DBus

/// The adapters a central uses (`serve --use-adapters`). bluetoothd's
/// objects under any other adapter are left out of the mirror, so the
/// central neither shows nor touches them: another program on the same
/// bluetoothd (Home Assistant's Bluetooth, a second gateway) has them.
public struct AdapterScope: Sendable, Hashable {
    /// The adapters' names (`hci0`); nil: every adapter.
    public var adapters: Set<String>?

    /// Every adapter bluetoothd has.
    public static let all = AdapterScope(adapters: nil)

    public init(adapters: Set<String>?) {
        self.adapters = adapters
    }

    /// Whether the object at `path` is mirrored: an adapter in scope or an
    /// object below one (`/org/bluez/hci0/dev_…`), or an object under no
    /// adapter (`/org/bluez` itself).
    func includes(_ path: ObjectPath) -> Bool {
        guard let adapters else { return true }
        let levels = path.rawValue.split(separator: "/", maxSplits: 3)
        guard levels.count >= 3, levels[0] == "org", levels[1] == "bluez" else { return true }
        return adapters.contains(String(levels[2]))
    }
}
