import BlueZ

/// The descriptor a command acts on: its characteristic (and so its device)
/// and how the descriptor is named (a UUID or `handle:N`).
public struct DescriptorTarget: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let selector: AttributeSelector

    public init(characteristic: CharacteristicTarget, selector: AttributeSelector) {
        self.characteristic = characteristic
        self.selector = selector
    }

    /// Reads `descriptor` (a UUID or `handle:N`) as a client gave it; a
    /// mistake names `descriptor`. A descriptor's UUID is not narrowed by a
    /// service: its characteristic already is.
    public init(characteristic: CharacteristicTarget, parsing descriptor: String) throws(GatewayCommandError) {
        self.init(
            characteristic: characteristic,
            selector: try CharacteristicTarget.attribute(descriptor, parameter: "descriptor", service: nil))
    }

    /// The device the descriptor belongs to.
    public var device: DeviceTarget { characteristic.device }
}
