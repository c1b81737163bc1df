import BlueZ
import PersistedState

/// Where what the gateway publishes as a peripheral (GATT applications,
/// advertisements) is stored, so that a restart publishes the same again
/// (GatewayAPI gives the state store; a gateway without one stores
/// nothing). Each change is committed before it returns.
public protocol PublicationStore: Sendable {
    /// Stores a published application or advertisement, with its
    /// definition in the form the store keeps (the client's JSON).
    func savePublication(_ item: PublishedItem) async throws(StateStoreFailure)
    /// Removes it; false if it was not stored.
    func removePublication(_ kind: PublishedItem.Kind, id: String) async throws(StateStoreFailure) -> Bool
    /// Stores a value a client set on an application's characteristic (by
    /// its index in the definition's order).
    func setPublishedValue(_ value: [UInt8], characteristic: Int, application: String) async throws(StateStoreFailure)
    /// Every stored publication, its definition read (at start-up).
    func publications() async throws(StateStoreFailure) -> [StoredPublication]
}
