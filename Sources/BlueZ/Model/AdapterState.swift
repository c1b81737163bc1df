/// Whether an adapter can be used, in the spirit of Core Bluetooth's
/// `CBManagerState`.
public enum AdapterState: String, Sendable, Hashable, CaseIterable {
    /// Powered and ready: scans, connections and GATT operations work.
    case poweredOn = "powered-on"
    /// Present but powered off; `Central.setPowered(true)` turns it on.
    case poweredOff = "powered-off"
    /// No such adapter, or bluetoothd is not running.
    case unavailable = "unavailable"
}
