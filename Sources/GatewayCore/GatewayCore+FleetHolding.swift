import BlueZ
import PersistedState
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The gateway as a holder of the fleet's kept devices: the keeper keeps
// the device and `standing` holds its subscriptions, as for a device kept
// here, but nothing is stored nor counted in a client's quota (the fleet,
// not a client, asked; the broker remembers the wish).
extension GatewayCore {
    /// Keeps the wish's device connected, through the pinned adapter, else
    /// the default one (`--adapter`), as a local keep would, else the one
    /// that hears it best with a free slot, else BlueZ's first, with its
    /// standing subscriptions. A device held already stays as it is.
    /// `noAdapter` when there is none to keep it on; `invalidParameter`
    /// when the wish's address is not one.
    @discardableResult
    public func holdForFleet(_ command: HoldForFleetCommand) throws(GatewayCommandError) -> FleetHold {
        let wish = command.wish
        let address = try DeviceTarget.address(wish.address, parameter: "address")
        if let held = fleetHolds.withLock({ $0[address] }) { return held }
        let adapter = try keepAdapter(
            wish.pinnedAdapter ?? defaultAdapter ?? central.preferredAdapter(for: address))
        keeper.keep(address, adapter: adapter, maxAttempts: wish.maxAttempts, label: wish.label)
        let subscriptions = wish.subscriptions.map { wanted in
            fleetSubscription(wanted, id: -standing.makeLocalID(), adapter: adapter, address: address)
        }
        for subscription in subscriptions { standing.start(subscription) }
        let hold = FleetHold(adapter: adapter, subscriptionIDs: subscriptions.map(\.id))
        fleetHolds.withLock { $0[address] = hold }
        return hold
    }

    /// Stops holding the device and disconnects it, returning once the link
    /// is down (or the command's timeout passed); false when it was not held.
    @discardableResult
    public func releaseFleetHold(_ command: ReleaseFleetHoldCommand) async -> Bool {
        let device = command.device
        guard let hold = fleetHolds.withLock({ $0.removeValue(forKey: device) }) else { return false }
        for id in hold.subscriptionIDs { _ = standing.remove(id) }
        let via = keeper.keptDevice(device, adapter: hold.adapter)?.via
        keeper.release(device, adapter: hold.adapter)
        try? await central.disconnect(device, adapter: via, timeout: command.timeout)
        return true
    }

    /// The devices this gateway holds for the fleet.
    public func fleetHeldDevices() -> [BluetoothAddress] {
        fleetHolds.withLock { $0.keys.sorted { $0.description < $1.description } }
    }

    /// How keeping a held device goes; nil if it is not held.
    public func fleetHoldStatus(_ device: BluetoothAddress) -> ConnectionKeeper.KeptDevice? {
        guard let hold = fleetHolds.withLock({ $0[device] }) else { return nil }
        return keeper.keptDevice(device, adapter: hold.adapter)
    }

    /// The link of a held device as the holder judges it; nil if it is not
    /// held.
    public func fleetHoldLink(_ device: BluetoothAddress) -> FleetHoldLink? {
        guard let hold = fleetHolds.withLock({ $0[device] }) else { return nil }
        let kept = keeper.keptDevice(device, adapter: hold.adapter)
        let via = kept?.via ?? hold.adapter
        let linked = (try? central.device(device, adapter: via))?.connected == true
        return FleetHoldLink(isUp: kept?.status == .connected || linked, adapterOn: central.adapterState(via) == .poweredOn)
    }

    /// The standing subscription a hold makes of a wish's characteristic.
    private func fleetSubscription(
        _ wanted: FleetKeep.Subscription, id: Int64, adapter: String, address: BluetoothAddress
    ) -> StandingSubscription {
        if let selector = Self.selector(of: wanted) {
            return StandingSubscription(
                id: id, adapter: adapter, address: address, selector: selector, mode: .notify, created: .now,
                owner: FleetHold.owner)
        }
        // Another gateway published what this one cannot read: held as
        // written, its entry says that it cannot be read.
        return StandingSubscription(
            id: id, adapter: adapter, address: address.description, service: wanted.service,
            characteristic: .uuid(wanted.characteristic), mode: .notify, created: .now, owner: FleetHold.owner)
    }

    /// The characteristic a wish names, read as a client's would be; nil
    /// when it is not a UUID or `handle:N`, or its service not a UUID.
    private static func selector(of wanted: FleetKeep.Subscription) -> AttributeSelector? {
        do throws(GatewayCommandError) {
            let service = try wanted.service.map { (text) throws(GatewayCommandError) in
                try CharacteristicTarget.uuid(text, parameter: "service")
            }
            return try CharacteristicTarget.attribute(wanted.characteristic, parameter: "characteristic", service: service)
        } catch {
            return nil
        }
    }
}
