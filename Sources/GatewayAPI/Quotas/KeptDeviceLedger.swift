import BlueZ
import GatewayCore

/// The quota ledger's kept devices, as the core counts them.
struct KeptDeviceLedger: KeptDeviceQuota {
    let ledger: QuotaLedger

    func holds(_ key: AdapterDevice) -> Bool {
        ledger.holds(.keptDevice, key: key.description)
    }

    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace {
        do {
            return QuotaPlace(owner: try ledger.admit(.keptDevice, for: ClientID(rawValue: owner)).owner.rawValue)
        } catch {
            throw .limitReached(error)
        }
    }

    func assign(_ place: QuotaPlace, to key: AdapterDevice) {
        ledger.assign(slot(place), key: key.description)
    }

    func cancel(_ place: QuotaPlace) {
        ledger.cancel(slot(place))
    }

    func release(_ key: AdapterDevice) {
        ledger.release(.keptDevice, key: key.description)
    }

    private func slot(_ place: QuotaPlace) -> QuotaLedger.Slot {
        QuotaLedger.Slot(resource: .keptDevice, owner: ClientID(rawValue: place.owner))
    }
}
