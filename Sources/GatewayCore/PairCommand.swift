/// Pair with a device (bluetoothd's agent asks its questions meanwhile,
/// as `pairing-request` events).
public struct PairCommand: Sendable, Hashable {
    public let device: DeviceTarget
    /// How long pairing may take (nil: the core's default).
    public let timeout: Duration?

    public init(device: DeviceTarget, timeout: Duration? = nil) {
        self.device = device
        self.timeout = timeout
    }
}
