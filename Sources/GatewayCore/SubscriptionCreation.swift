import PersistedState

/// What creating a standing subscription did.
public enum SubscriptionCreation: Sendable {
    /// An identical subscription (same adapter, device, characteristic,
    /// service and mode, whoever made it) was held already: that one, and
    /// nothing was created.
    case existing(StandingSubscriptions.Entry)
    /// Stored, counted and held; the entry is nil only when the core was
    /// stopping and holds nothing more.
    case created(StandingSubscription, StandingSubscriptions.Entry?)
}
