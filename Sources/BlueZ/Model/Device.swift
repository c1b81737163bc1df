import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A snapshot of a remote device (`org.bluez.Device1`): its identity, what
/// it advertises and the state of its connection.
public struct Device: Sendable, Hashable {
    /// Its object path, `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    var path: ObjectPath
    /// The adapter it was seen on (`hci0`).
    public var adapter: String
    public var address: BluetoothAddress
    public var addressType: AddressType = .public
    /// The name to show (`Alias`: the user's alias, else the name, else the
    /// address with dashes).
    public var alias: String?
    public var advertisement = AdvertisementData()
    /// The Bluetooth class of device (BR/EDR only).
    public var deviceClass: UInt32?
    public var icon: String?
    public var connected = false
    public var paired = false
    /// Whether keys are stored (BlueZ 5.66 `Bonded`).
    public var bonded = false
    public var trusted = false
    public var blocked = false
    /// Whether bluetoothd finished discovering the GATT database since the
    /// connection was made (`ServicesResolved`).
    public var servicesResolved = false
    /// The reason of the last disconnection, when bluetoothd gave one (the
    /// `Device1.Disconnected` signal of BlueZ 5.64+, e.g.
    /// `org.bluez.Reason.Remote`).
    public var lastDisconnectReason: String?
    /// When the central last heard an advertisement from it (a change of
    /// an advertised property, RSSI included); nil if not since the central
    /// started. bluetoothd keeps no such time on D-Bus.
    public var lastSeen: Date?
    /// The ATT MTU of the connection, while connected and once bluetoothd
    /// exchanged it (the `MTU` of its GATT characteristics, BlueZ 5.62+);
    /// filled in snapshots the central hands out.
    public var mtu: UInt16?
    /// The RSSI averaged over the reports a discovery session saw, when
    /// its filter asks for smoothing (`DiscoveryFilter.rssiSmoothing`).
    public var smoothedRSSI: Double?

    init(path: ObjectPath, adapter: String, address: BluetoothAddress) {
        self.path = path
        self.adapter = adapter
        self.address = address
    }

    /// The advertised name (`Name`), a shortcut into `advertisement`.
    public var name: String? { advertisement.localName }
}
