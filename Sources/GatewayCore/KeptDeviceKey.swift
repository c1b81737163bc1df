import BlueZ

/// A device kept on this gateway, named by its adapter and address: the key
/// of its stored record and of its place in the quotas.
public struct KeptDeviceKey: Sendable, Hashable, CustomStringConvertible {
    public let adapter: String
    public let address: BluetoothAddress

    public init(adapter: String, address: BluetoothAddress) {
        self.adapter = adapter
        self.address = address
    }

    /// `hci0/AA:BB:CC:DD:EE:FF`.
    public var description: String { "\(adapter)/\(address)" }
}
