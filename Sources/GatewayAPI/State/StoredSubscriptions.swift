import GatewayCore
import PersistedState

/// The state store's standing subscriptions, as the core stores them.
struct StoredSubscriptions: StandingSubscriptionStore {
    let store: Store

    func addSubscription(_ subscription: StandingSubscription) async throws(StateStoreFailure) -> StandingSubscription {
        do throws(StoreError) {
            return try await store.addSubscription(
                adapter: subscription.adapter, address: subscription.address, service: subscription.service,
                characteristic: subscription.characteristic, mode: subscription.mode, owner: subscription.owner)
        } catch {
            throw StateStoreFailure(error)
        }
    }

    func removeSubscription(_ id: Int64) async throws(StateStoreFailure) -> Bool {
        do throws(StoreError) {
            return try await store.removeSubscription(id: id)
        } catch {
            throw StateStoreFailure(error)
        }
    }

    func subscriptions() async throws(StateStoreFailure) -> [StandingSubscription] {
        do throws(StoreError) {
            return try await store.subscriptions()
        } catch {
            throw StateStoreFailure(error)
        }
    }
}
