/// Keep a device connected: on this gateway (reconnected whenever the link
/// drops, given up after `maxAttempts` failures in a row), or by the fleet,
/// whose gateways choose which one holds it (docs/fleet.md).
public struct KeepCommand: Sendable, Hashable {
    /// Who keeps the device, and with which options.
    public enum Placement: Sendable, Hashable {
        case thisGateway(maxAttempts: Int?, label: String?)
        case fleet(FleetKeep)
    }

    public let device: DeviceTarget
    public let placement: Placement

    public init(device: DeviceTarget, placement: Placement) {
        self.device = device
        self.placement = placement
    }
}
