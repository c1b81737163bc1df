extension BluetoothAddress {
    /// The sub-type of a random LE address, from its two most significant
    /// bits (Core Specification, Vol 6, Part B, 1.3.2).
    public enum RandomSubtype: String, Sendable, Hashable, CaseIterable {
        /// `00`: changes often and cannot be resolved to an identity.
        case nonResolvablePrivate = "non-resolvable-private"
        /// `01`: changes often; a bonded peer resolves it with the IRK.
        case resolvablePrivate = "resolvable-private"
        /// `10`: not defined by the specification.
        case reserved = "reserved"
        /// `11`: fixed for at least a power cycle.
        case `static` = "static"
    }

    /// The random sub-type the top two bits would mean. Meaningful only for
    /// an address whose `AddressType` is `.random`: the bits of a public
    /// address are part of its IEEE OUI.
    public var randomSubtype: RandomSubtype {
        switch rawValue >> 46 {
        case 0b00: .nonResolvablePrivate
        case 0b01: .resolvablePrivate
        case 0b10: .reserved
        default: .static
        }
    }
}
