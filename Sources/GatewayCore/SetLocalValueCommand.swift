/// Set the value of a characteristic the gateway publishes (stored first,
/// so that a restart publishes it with this value); centrals subscribed to
/// it are notified. The result says whether any was.
public struct SetLocalValueCommand: Sendable, Hashable {
    public let characteristic: LocalCharacteristic
    public let value: [UInt8]

    public init(characteristic: LocalCharacteristic, value: [UInt8]) {
        self.characteristic = characteristic
        self.value = value
    }
}
