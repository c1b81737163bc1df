/// How a device kept on this gateway is doing; fails with `notFound` when
/// it is not kept.
public struct KeepStatusCommand: Sendable, Hashable {
    public let device: DeviceTarget

    public init(device: DeviceTarget) {
        self.device = device
    }
}
