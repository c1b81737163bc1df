/// What a notification subscription delivers (`NotificationSubscription.events`).
public enum NotificationEvent: Sendable, Hashable {
    /// A notified or indicated value.
    case value(CharacteristicValue)
    /// BlueZ cannot be reached (bluetoothd stopped, or the bus connection
    /// is lost), so no value can arrive; the subscription is kept, to be
    /// resumed (`.resumed`) or ended (the sequence throws) once BlueZ is back.
    case interrupted(BlueZError)
    /// Notifications flow again after an interruption.
    case resumed
}
