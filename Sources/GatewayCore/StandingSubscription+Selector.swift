import BlueZ
import PersistedState
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// A standing subscription made from the selector a command names: the
// inverse of `StandingSubscriptions.selector(_:)`, which reads it back.
extension StandingSubscription {
    /// A subscription to the characteristic `selector` names on `address`:
    /// its canonical UUID and the service narrowing it, or its handle.
    init(
        id: Int64, adapter: String, address: BluetoothAddress, selector: AttributeSelector, mode: Mode, created: Date,
        owner: String
    ) {
        let characteristic: Characteristic
        let service: String?
        switch selector {
        case .handle(let handle):
            characteristic = .handle(handle)
            service = nil
        case .uuid(let uuid, let narrowing):
            characteristic = .uuid(uuid.description)
            service = narrowing?.description
        }
        self.init(
            id: id, adapter: adapter, address: address.description, service: service, characteristic: characteristic,
            mode: mode, created: created, owner: owner)
    }

    /// The same subscription under another id (the store's, or the core's).
    func numbered(_ id: Int64) -> StandingSubscription {
        StandingSubscription(
            id: id, adapter: adapter, address: address, service: service, characteristic: characteristic, mode: mode,
            created: created, owner: owner)
    }
}
