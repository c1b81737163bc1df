import BlueZ
import GatewayCore

/// One resource of the quota ledger, as the core counts it: kept devices
/// (by adapter and address), standing subscriptions (by id), or
/// applications or advertisements (by id).
struct LedgerQuota<Key: CustomStringConvertible & Sendable>: Sendable {
    let ledger: QuotaLedger
    let resource: QuotaLedger.Resource

    func holds(_ key: Key) -> Bool {
        ledger.holds(resource, key: key.description)
    }

    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace {
        do {
            return QuotaPlace(owner: try ledger.admit(resource, for: ClientID(rawValue: owner)).owner.rawValue)
        } catch {
            throw .limitReached(error)
        }
    }

    func assign(_ place: QuotaPlace, to key: Key) {
        ledger.assign(slot(place), key: key.description)
    }

    func cancel(_ place: QuotaPlace) {
        ledger.cancel(slot(place))
    }

    func release(_ key: Key) {
        ledger.release(resource, key: key.description)
    }

    func restore(_ key: Key, owner: String?) {
        ledger.restore(resource, key: key.description, owner: ClientID(stored: owner))
    }

    private func slot(_ place: QuotaPlace) -> QuotaLedger.Slot {
        QuotaLedger.Slot(resource: resource, owner: ClientID(rawValue: place.owner))
    }
}

extension LedgerQuota: ClientQuota {}
