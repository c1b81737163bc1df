/// Subscribe to a characteristic's notifications: as a stream (a
/// `NotificationSubscription`, for a door that passes the values on as
/// events, the MQTT bridge), which lasts until its iteration ends, or into
/// a sink (a `NotificationLease`, for an SSE stream), which lasts until the
/// lease is cancelled; either ends when the device disconnects or the
/// characteristic goes.
public struct SubscribeCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget

    public init(characteristic: CharacteristicTarget) {
        self.characteristic = characteristic
    }
}
