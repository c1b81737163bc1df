/// Connect to a device (and resolve its services), within `timeout` or
/// the core's default; the result is the device as the central then knows it.
public struct ConnectCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let timeout: Duration?

    public init(device: DeviceTarget, timeout: Duration? = nil) {
        self.device = device
        self.timeout = timeout
    }
}
