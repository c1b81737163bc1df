/// A peer as one adapter knows it. bluetoothd keeps one device object per
/// adapter for the same peer, so an address alone does not say which one a
/// connection, a kept device or a subscription belongs to.
public struct AdapterDevice: Hashable, Sendable, CustomStringConvertible {
    public var adapter: String
    public var address: BluetoothAddress

    public init(adapter: String, address: BluetoothAddress) {
        self.adapter = adapter
        self.address = address
    }

    /// `hci0/AA:BB:CC:DD:EE:FF`, for logs.
    public var description: String { "\(adapter)/\(address)" }
}
