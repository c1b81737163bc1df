/// Why a characteristic's subscription ended for its consumers, when they
/// did not end it themselves: a typed reason for whoever must tell its own
/// users (an HTTP stream's last event), with the error that a subscription
/// stream throws for the same end.
public struct SubscriptionEnd: Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The device disconnected (`error`'s message carries bluetoothd's
        /// reason when it gave one).
        case deviceDisconnected
        /// bluetoothd removed the device object.
        case deviceRemoved
        /// The characteristic disappeared (services changed, or were
        /// resolved again).
        case characteristicRemoved
        /// BlueZ came back (bluetoothd or the bus restarted) and the device
        /// is no longer connected.
        case bluezRestarted
        /// Notifications could not be started again after they stopped
        /// underneath the subscription (BlueZ came back, an acquired
        /// socket hung up while the link stayed up): `error` says why.
        case restartFailed
        /// The central stopped.
        case centralStopped
    }

    public var reason: Reason
    /// The end as the error a `NotificationSubscription` throws: its code
    /// (`.notConnected`, `.notFound`, `.cancelled`, ...) and message.
    public var error: BlueZError

    public init(_ reason: Reason, _ error: BlueZError) {
        self.reason = reason
        self.error = error
    }

    public var description: String { error.message }
}
