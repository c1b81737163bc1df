/// Whether the central can reach BlueZ, and if not, which link is missing.
public enum BlueZAvailability: Sendable, Hashable {
    /// The bus connection is up and bluetoothd owns `org.bluez`.
    case available
    /// The bus is reachable but bluetoothd is not running on it.
    case bluetoothdNotRunning
    /// The D-Bus connection is lost (dbus-daemon stopped or restarted); the
    /// reason as the bus layer reported it. The owner of the connection
    /// reconnects and hands the central the new one (`Central.attach`).
    case busDisconnected(String)

    /// A short stable name: `available`, `bluetoothd-unavailable`,
    /// `bus-unavailable`.
    public var name: String {
        switch self {
        case .available: "available"
        case .bluetoothdNotRunning: "bluetoothd-unavailable"
        case .busDisconnected: "bus-unavailable"
        }
    }

    /// What a person should know about it.
    public var detail: String {
        switch self {
        case .available: "BlueZ is reachable"
        case .bluetoothdNotRunning: "bluetoothd is not running (org.bluez has no owner on the bus)"
        case .busDisconnected(let reason): "the D-Bus connection is lost (\(reason)); reconnecting"
        }
    }
}
