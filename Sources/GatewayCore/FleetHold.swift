/// A device this gateway holds for the fleet: the adapter it is kept on and
/// the ids of its standing subscriptions (negative, so that they never meet
/// the store's, which count up from 1, nor the core's own).
public struct FleetHold: Sendable, Hashable {
    /// Who the standing subscriptions of a hold belong to.
    public static let owner = "fleet"

    public let adapter: String
    public let subscriptionIDs: [Int64]
}
