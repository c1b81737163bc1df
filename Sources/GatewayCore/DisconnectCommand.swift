/// Disconnect a device; the result is the device as the central then knows it.
public struct DisconnectCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let timeout: Duration?

    public init(device: DeviceTarget, timeout: Duration? = nil) {
        self.device = device
        self.timeout = timeout
    }
}
