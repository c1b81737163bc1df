import BlueZ

// Start-up: what the store kept from the last run, taken up again.
extension GatewayCore {
    /// Keeps the devices, holds the standing subscriptions and publishes
    /// the applications and advertisements the stores hold, as before the
    /// restart. Each is counted against its stored
    /// owner whatever the limits, so that lowering a limit never drops
    /// what exists. Called once, before any command runs.
    public func restore() async throws(StateStoreFailure) -> Restoration {
        var restoration = Restoration()
        if let keptStore {
            for kept in try await keptStore.keptDevices() {
                guard let address = BluetoothAddress(kept.address) else {
                    restoration.unreadableAddresses.append(kept.address)
                    continue
                }
                let options = KeptDeviceOptions(stored: kept.options)
                keeper.keep(address, adapter: kept.adapter, maxAttempts: options.maxAttempts, label: options.label)
                keptQuota?.restore(AdapterDevice(adapter: kept.adapter, address: address), owner: kept.owner)
                restoration.keptDevices += 1
            }
        }
        if let subscriptionStore {
            for subscription in try await subscriptionStore.subscriptions() {
                standing.start(subscription)
                subscriptionQuota?.restore(subscription.id, owner: subscription.owner)
                restoration.subscriptions += 1
            }
        }
        try await restorePublications(into: &restoration)
        return restoration
    }
}
