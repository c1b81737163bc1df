/// Read a characteristic's value from `offset`; the result is its bytes.
public struct ReadCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let offset: UInt16
    public let timeout: Duration?

    public init(characteristic: CharacteristicTarget, offset: UInt16 = 0, timeout: Duration? = nil) {
        self.characteristic = characteristic
        self.offset = offset
        self.timeout = timeout
    }
}
