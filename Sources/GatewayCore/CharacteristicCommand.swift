/// Describe one characteristic: its service, handle, flags and
/// descriptors (no value: that is `ReadCommand`).
public struct CharacteristicCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget

    public init(characteristic: CharacteristicTarget) {
        self.characteristic = characteristic
    }
}
