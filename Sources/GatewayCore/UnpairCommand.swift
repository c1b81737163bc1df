/// Forget a device's bond: bluetoothd keeps none without the device's
/// object, so the device is removed (it comes back, unpaired, when it is
/// heard again).
public struct UnpairCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let timeout: Duration?

    public init(device: DeviceTarget, timeout: Duration? = nil) {
        self.device = device
        self.timeout = timeout
    }
}
