import GatewayCore
import PersistedState

/// The state store's published items, as the core stores what it
/// publishes: the definition kept as the client's JSON, and read back with
/// the routes' own readers (`PeripheralJSON`), so that a restart reads it
/// as the request was read.
struct StoredPublications: PublicationStore {
    let store: Store

    func savePublication(_ item: PublishedItem) async throws(StateStoreFailure) {
        try await StateStoreFailure.converting { () async throws(StoreError) in try await store.savePublished(item) }
    }

    func removePublication(_ kind: PublishedItem.Kind, id: String) async throws(StateStoreFailure) -> Bool {
        try await StateStoreFailure.converting { () async throws(StoreError) in
            try await store.removePublished(kind, id: id)
        }
    }

    func setPublishedValue(_ value: [UInt8], characteristic: Int, application: String) async throws(StateStoreFailure) {
        _ = try await StateStoreFailure.converting { () async throws(StoreError) in
            try await store.setPublishedValue(value, characteristic: characteristic, application: application)
        }
    }

    func publications() async throws(StateStoreFailure) -> [StoredPublication] {
        let items = try await StateStoreFailure.converting { () async throws(StoreError) in try await store.publishedItems() }
        return items.map { item in
            StoredPublication(
                kind: item.kind, id: item.id, adapter: item.adapter, definition: Self.definition(item), values: item.values,
                owner: item.owner)
        }
    }

    /// The stored definition, read as its request was.
    private static func definition(_ item: PublishedItem) -> StoredPublication.Definition {
        do throws(Problem) {
            switch item.kind {
            case .application:
                return .application(
                    try PeripheralJSON.application(JSONBody(json: item.definition, allowed: PeripheralJSON.applicationFields)))
            case .advertisement:
                return .advertisement(
                    try PeripheralJSON.advertisement(
                        JSONBody(json: item.definition, allowed: PeripheralJSON.advertisementFields)))
            }
        } catch {
            return .unreadable(error.detail)
        }
    }
}
