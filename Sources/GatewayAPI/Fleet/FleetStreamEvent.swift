/// What a notification stream opened through the fleet receives.
public enum FleetStreamEvent: Sendable, Hashable {
    /// One value, as the answering gateway published it on its value topic:
    /// the JSON of its `characteristic-value` event.
    case value([UInt8])
    /// The subscription ended (the device left the answering gateway, that
    /// gateway went offline, …): the stream's last event, with the
    /// `SubscriptionEnded` reason and detail.
    case ended(reason: String, detail: String)
}
