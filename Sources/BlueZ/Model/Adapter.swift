import DBus

/// A snapshot of a Bluetooth adapter (`org.bluez.Adapter1`), such as `hci0`.
public struct Adapter: Sendable, Hashable {
    /// The adapter's name, the last element of its path: `hci0`.
    public var id: String
    /// Its object path, `/org/bluez/hci0`.
    var path: ObjectPath
    public var address: BluetoothAddress?
    public var addressType: AddressType?
    /// The system name (`Name`) and the user-settable one (`Alias`).
    public var name: String?
    public var alias: String?
    public var powered = false
    /// `PowerState` (BlueZ 5.64+): `on`, `off`, `off-enabling`,
    /// `on-disabling` or `off-blocked` (rfkill); nil when not reported.
    public var powerState: String?
    public var discoverable = false
    public var pairable = false
    /// Whether the adapter is scanning (for any client, not only this one).
    public var discovering = false
    public var uuids: [BluetoothUUID] = []

    init(path: ObjectPath) {
        self.path = path
        self.id = String(path.lastElement)
    }

    /// Powered on or off (an adapter that exists is never `.unavailable`).
    public var state: AdapterState { powered ? .poweredOn : .poweredOff }
}
