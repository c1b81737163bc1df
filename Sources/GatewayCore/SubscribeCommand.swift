/// Subscribe to a characteristic's notifications for a door that passes
/// the values on as events (the MQTT bridge): the subscription lasts until
/// its iteration ends, the device disconnects or the characteristic goes.
public struct SubscribeCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget

    public init(characteristic: CharacteristicTarget) {
        self.characteristic = characteristic
    }
}
