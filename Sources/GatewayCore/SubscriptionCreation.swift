import PersistedState

/// What creating a standing subscription did.
public enum SubscriptionCreation: Sendable {
    /// An identical subscription (same adapter, device, characteristic,
    /// service and mode, whoever made it) was held already: that one, and
    /// nothing was created.
    case existing(StandingSubscriptions.Entry)
    /// Stored, counted and held. A core that was stopping holds nothing
    /// more: the entry then waits, saying so, and the stored subscription is
    /// held again at the next start.
    case created(StandingSubscription, StandingSubscriptions.Entry)
}
