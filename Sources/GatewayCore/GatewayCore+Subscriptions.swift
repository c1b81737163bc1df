import BlueZ
import PersistedState
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Standing subscriptions: stored, counted in the quotas, and held by
// `standing` while their devices are connected.
extension GatewayCore {
    /// Creates a standing subscription for `owner`, stored before it
    /// returns (the store has committed it), or answers with the identical
    /// one held already. One creation runs at a time, so that two identical
    /// requests make one subscription.
    public func createSubscription(_ command: CreateSubscriptionCommand, owner: String) async throws(GatewayCommandError)
        -> SubscriptionCreation
    {
        let target = command.characteristic
        let adapter = try keepAdapter(adapter(of: target.device))
        var subscription = StandingSubscription(
            id: 0, adapter: adapter, address: target.device.address, selector: target.selector, mode: command.mode,
            created: .now, owner: owner)
        do {
            try await subscriptionCreation.acquire()
        } catch {
            throw .bluez(BlueZError(.cancelled, "the operation was cancelled"))
        }
        defer { subscriptionCreation.release() }
        if let existing = standing.entry(identicalTo: subscription) { return .existing(existing) }
        let place = try subscriptionQuota?.reserve(for: owner)
        if let subscriptionStore {
            do {
                subscription = try await subscriptionStore.addSubscription(subscription)
            } catch {
                if let place { subscriptionQuota?.cancel(place) }
                throw .stateStore(error)
            }
        } else {
            subscription = subscription.numbered(standing.makeLocalID())
        }
        if let place { subscriptionQuota?.assign(place, to: subscription.id) }
        standing.start(subscription)
        let entry =
            standing.entry(subscription.id)
            ?? StandingSubscriptions.Entry(
                subscription: subscription, lastReason: "the gateway is stopping; it is held again when it starts")
        return .created(subscription, entry)
    }

    /// Stops holding the subscription and forgets it (removed from the
    /// store first); `notFound` when there is none with that id.
    public func removeSubscription(_ command: RemoveSubscriptionCommand) async throws(GatewayCommandError) {
        var removed = false
        if let subscriptionStore {
            do {
                removed = try await subscriptionStore.removeSubscription(command.id)
            } catch {
                throw .stateStore(error)
            }
        }
        if standing.remove(command.id) { removed = true }
        subscriptionQuota?.release(command.id)
        guard removed else { throw .notFound("there is no standing subscription \(command.id)") }
    }
}
