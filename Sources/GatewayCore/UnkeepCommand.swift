/// Stop keeping a device connected: on this gateway, or (with `fleet`)
/// the fleet's wish for it.
public struct UnkeepCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let fleet: Bool

    public init(device: DeviceTarget, fleet: Bool = false) {
        self.device = device
        self.fleet = fleet
    }
}
