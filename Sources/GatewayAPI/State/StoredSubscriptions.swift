import GatewayCore
import PersistedState

/// The state store's standing subscriptions, as the core stores them.
struct StoredSubscriptions: StandingSubscriptionStore {
    let store: Store

    func addSubscription(_ subscription: StandingSubscription) async throws(StateStoreFailure) -> StandingSubscription {
        try await StateStoreFailure.converting { () async throws(StoreError) in
            try await store.addSubscription(
                adapter: subscription.adapter, address: subscription.address, service: subscription.service,
                characteristic: subscription.characteristic, mode: subscription.mode, owner: subscription.owner)
        }
    }

    func removeSubscription(_ id: Int64) async throws(StateStoreFailure) -> Bool {
        try await StateStoreFailure.converting { () async throws(StoreError) in try await store.removeSubscription(id: id) }
    }

    func subscriptions() async throws(StateStoreFailure) -> [StandingSubscription] {
        try await StateStoreFailure.converting { () async throws(StoreError) in try await store.subscriptions() }
    }
}
