import BlueZ

/// Stop holding a device for the fleet and disconnect it, so that the
/// fleet's next holder never meets this gateway's connection.
public struct ReleaseFleetHoldCommand: Sendable, Hashable {
    public let device: BluetoothAddress
    /// How long the disconnection may take before the release returns anyway.
    public let timeout: Duration

    public init(device: BluetoothAddress, timeout: Duration = .seconds(10)) {
        self.device = device
        self.timeout = timeout
    }
}
