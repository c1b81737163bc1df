import PersistedState

/// Where the standing subscriptions are stored, so that a restart holds
/// them again (GatewayAPI gives the state store; a gateway without one
/// stores nothing). Each change is committed before it returns.
public protocol StandingSubscriptionStore: Sendable {
    /// Stores `subscription` (its id is ignored) and returns it with the
    /// id the store gave it.
    func addSubscription(_ subscription: StandingSubscription) async throws(StateStoreFailure) -> StandingSubscription
    /// Removes the subscription `id`; false if it was not stored.
    func removeSubscription(_ id: Int64) async throws(StateStoreFailure) -> Bool
    /// Every stored subscription, in id order (read at start-up).
    func subscriptions() async throws(StateStoreFailure) -> [StandingSubscription]
}
