/// Read a characteristic's value from `offset`; the result is its bytes.
/// With `pairing: .auto`, a read refused for want of pairing pairs and
/// reads once more.
public struct ReadCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let offset: UInt16
    public let timeout: Duration?
    public let pairing: PairingPolicy

    public init(
        characteristic: CharacteristicTarget, offset: UInt16 = 0, timeout: Duration? = nil, pairing: PairingPolicy = .never
    ) {
        self.characteristic = characteristic
        self.offset = offset
        self.timeout = timeout
        self.pairing = pairing
    }
}
