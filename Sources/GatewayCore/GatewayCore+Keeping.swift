import BlueZ

// Kept connections: on this gateway (stored, counted in the quotas, and
// handed to the keeper), or by the fleet (a wish the fleet's gateways
// settle among themselves).
extension GatewayCore {
    /// Keeps the device on this gateway (stored first, so that keeping is
    /// durable before the answer, and counted against `owner`'s quota), or
    /// publishes the fleet's wish.
    public func keep(_ command: KeepCommand, owner: String) async throws(GatewayCommandError) -> KeepOutcome {
        let options: KeptDeviceOptions
        switch command.placement {
        case .fleet(let wish):
            try await keepByFleet(wish)
            return .keptByFleet(wish)
        case .thisGateway(let maxAttempts, let label): options = KeptDeviceOptions(maxAttempts: maxAttempts, label: label)
        }
        let address = command.device.address
        let key = AdapterDevice(adapter: try keptAdapter(address, adapter(of: command.device)), address: address)
        // Changing a kept device's options takes no new place.
        let place = try keptQuota.flatMap { (quota) throws(GatewayCommandError) in
            quota.holds(key) ? nil : try quota.reserve(for: owner)
        }
        if let keptStore {
            do {
                try await keptStore.storeKept(key, options: options, owner: owner)
            } catch {
                if let place { keptQuota?.cancel(place) }
                throw .stateStore(error)
            }
        }
        let isNew = keeper.keep(address, adapter: key.adapter, maxAttempts: options.maxAttempts, label: options.label)
        if let place { keptQuota?.assign(place, to: key) }
        return .kept(keeper.keptDevice(address, adapter: key.adapter), isNew: isNew)
    }

    /// Stops keeping the device on this gateway (removed from the store
    /// first), or clears the fleet's wish; `notFound` when it was not kept.
    public func unkeep(_ command: UnkeepCommand) async throws(GatewayCommandError) {
        let address = command.device.address
        if command.fleet { return try await unkeepByFleet(address) }
        let key = AdapterDevice(adapter: try keptAdapter(address, adapter(of: command.device)), address: address)
        var removed = false
        if let keptStore {
            do {
                removed = try await keptStore.removeKept(key)
            } catch {
                throw .stateStore(error)
            }
        }
        if keeper.release(address, adapter: key.adapter) { removed = true }
        keptQuota?.release(key)
        guard removed else { throw .notFound("\(address) on \(key.adapter) is not kept connected") }
    }

    /// Publishes the fleet's wish to keep a device; `notFound` for a
    /// gateway in no fleet.
    public func keepByFleet(_ wish: FleetKeep) async throws(GatewayCommandError) {
        try await fleetKeeping().keep(wish)
    }

    /// Clears the fleet's wish for `address`; `notFound` when the fleet did
    /// not keep it, or the gateway is in no fleet.
    public func unkeepByFleet(_ address: BluetoothAddress) async throws(GatewayCommandError) {
        guard try await fleetKeeping().unkeep(address) else { throw .notFound("the fleet does not keep \(address)") }
    }

    /// The fleet, or `notFound` for a gateway in none.
    private func fleetKeeping() throws(GatewayCommandError) -> any FleetKeeping {
        guard let fleet = fleet.withLock({ $0 }) else {
            throw .notFound("this gateway is not in a fleet: keeping by the fleet needs the MQTT bridge (--mqtt)")
        }
        return fleet
    }

    public func keepStatus(_ command: KeepStatusCommand) throws(GatewayCommandError) -> ConnectionKeeper.KeptDevice {
        let address = command.device.address
        let adapter = try keptAdapter(address, adapter(of: command.device))
        guard let kept = keeper.keptDevice(address, adapter: adapter) else {
            throw .notFound("\(address) on \(adapter) is not kept connected")
        }
        return kept
    }

    /// The adapter of a kept device named without one: the one it is kept
    /// on (so that keeping can be seen, changed and ended while bluetoothd
    /// is away), else the adapter that hears it best with a free connection
    /// slot (`Central.preferredAdapter`), else as `keepAdapter`.
    public func keptAdapter(_ address: BluetoothAddress, _ requested: String?) throws(GatewayCommandError) -> String {
        if let requested { return requested }
        if let kept = keeper.keptDevices().first(where: { $0.address == address }) { return kept.adapter }
        if let preferred = central.preferredAdapter(for: address) { return preferred }
        return try keepAdapter(nil)
    }

    /// The adapter a kept connection is stored under: the one asked for,
    /// else BlueZ's first.
    public func keepAdapter(_ requested: String?) throws(GatewayCommandError) -> String {
        if let requested { return requested }
        guard let first = central.adapters().first?.id else {
            throw .noAdapter(
                "no adapter to keep the device on: name one with ?adapter= or start bluetoothd with an adapter")
        }
        return first
    }
}
