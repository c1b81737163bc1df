import BlueZ

/// The descriptor a command acts on: the characteristic that owns it (as a
/// `CharacteristicTarget` names it) and the descriptor among that
/// characteristic's, by UUID or `handle:N`.
public struct DescriptorTarget: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let selector: AttributeSelector

    public init(characteristic: CharacteristicTarget, selector: AttributeSelector) {
        self.characteristic = characteristic
        self.selector = selector
    }

    /// Reads `descriptor` (a UUID or `handle:N`) as a client gave it, after
    /// the characteristic (as the REST routes read the path); a mistake
    /// names `descriptor`.
    public init(characteristic: CharacteristicTarget, parsing descriptor: String) throws(GatewayCommandError) {
        self.init(
            characteristic: characteristic,
            selector: try CharacteristicTarget.attribute(descriptor, parameter: "descriptor", service: nil))
    }
}
