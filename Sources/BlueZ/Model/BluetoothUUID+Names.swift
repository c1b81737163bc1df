extension BluetoothUUID {
    /// What a UUID names in the Bluetooth SIG assigned numbers.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case service
        case characteristic
        case descriptor
        /// A 16-bit service UUID the SIG allocated to a member company
        /// (0xFC00-0xFEFF); its name is the company's.
        case memberService = "member-service"
    }

    /// The well-known name of this UUID (`2a37` is "Heart Rate
    /// Measurement"), or nil if it has none. A UUID listed under more than
    /// one kind gets the first of service, characteristic, descriptor,
    /// member service; use `name(as:)` when the kind is known.
    public var name: String? { AssignedNumbers.uuidNames[self]?.first?.name }

    /// The kind of the name `name` returns, or nil if it has none.
    public var kind: Kind? { AssignedNumbers.uuidNames[self]?.first?.kind }

    /// The well-known name of this UUID as a `kind` (say, the UUID of a
    /// GattCharacteristic1 object as a characteristic), or nil.
    public func name(as kind: Kind) -> String? {
        AssignedNumbers.uuidNames[self]?.first { $0.kind == kind }?.name
    }
}
