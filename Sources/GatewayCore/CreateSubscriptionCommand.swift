import PersistedState

/// Hold a standing subscription to a characteristic: subscribed whenever
/// its device is connected, whether or not any client listens, and stored
/// so that a restart holds it again.
public struct CreateSubscriptionCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let mode: StandingSubscription.Mode

    public init(characteristic: CharacteristicTarget, mode: StandingSubscription.Mode = .notify) {
        self.characteristic = characteristic
        self.mode = mode
    }
}
