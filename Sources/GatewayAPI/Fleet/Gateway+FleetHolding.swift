import GatewayCore
import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PersistedState

/// A device this gateway holds for the fleet: the adapter it is kept on and
/// its standing subscriptions.
struct FleetHold: Sendable {
    var adapter: String
    var subscriptionIDs: [Int64]
}

// The gateway as a holder of the fleet's kept devices (the MQTT bridge
// decides which it holds, docs/fleet.md). Nothing of it is stored in the
// state directory: the broker holds the fleet's wish, and a gateway that
// restarts holds a device again only when the fleet gives it to it.
extension Gateway {
    /// Keeps `wish`'s device connected (through the pinned adapter, else the
    /// default one (`--adapter`), as a local keep would, else the one that
    /// hears it best with a free slot) with its standing subscriptions.
    /// False when there is no adapter to keep it on.
    public func holdForFleet(_ wish: FleetKeep) -> Bool {
        guard let address = BluetoothAddress(wish.address) else { return false }
        if fleetHolds.withLock({ $0[address.description] != nil }) { return true }
        guard
            let adapter = wish.pinnedAdapter ?? configuration.defaultAdapter ?? central.preferredAdapter(for: address)
                ?? central.adapters().first?.id
        else { return false }
        keeper.keep(address, adapter: adapter, maxAttempts: wish.maxAttempts, label: wish.label)
        var ids: [Int64] = []
        for wanted in wish.subscriptions {
            let characteristic: StandingSubscription.Characteristic
            if wanted.characteristic.hasPrefix("handle:"), let handle = UInt16(wanted.characteristic.dropFirst(7)) {
                characteristic = .handle(handle)
            } else {
                characteristic = .uuid(wanted.characteristic)
            }
            // Negative ids never meet the store's (which count up from 1).
            let subscription = StandingSubscription(
                id: -standing.makeLocalID(), adapter: adapter, address: address.description, service: wanted.service,
                characteristic: characteristic, mode: .notify, created: Date(), owner: "fleet")
            standing.start(subscription)
            ids.append(subscription.id)
        }
        fleetHolds.withLock { $0[address.description] = FleetHold(adapter: adapter, subscriptionIDs: ids) }
        return true
    }

    /// The devices this gateway holds for the fleet.
    public func fleetHeldDevices() -> [String] {
        fleetHolds.withLock { $0.keys.sorted() }
    }

    /// How keeping a held device goes; nil if it is not held.
    public func fleetHoldStatus(_ address: String) -> ConnectionKeeper.KeptDevice? {
        guard let hold = fleetHolds.withLock({ $0[address] }), let device = BluetoothAddress(address) else { return nil }
        return keeper.keptDevice(device, adapter: hold.adapter)
    }

    /// The link of a held device as the holder judges it: up as soon as
    /// bluetoothd says the device is connected (its services may still be
    /// resolving, which takes a real device seconds; the keeper says
    /// `connected` only after), and whether the adapter it is kept through
    /// is powered (one that is off cannot reach the device however long it
    /// tries). Nil if the device is not held.
    public func fleetHoldLink(_ address: String) -> (isUp: Bool, adapterOn: Bool)? {
        guard let hold = fleetHolds.withLock({ $0[address] }), let device = BluetoothAddress(address) else { return nil }
        let kept = keeper.keptDevice(device, adapter: hold.adapter)
        let via = kept?.via ?? hold.adapter
        let linked = (try? central.device(device, adapter: via))?.connected == true
        return (kept?.status == .connected || linked, central.adapterState(via) == .poweredOn)
    }

    /// Stops holding the device and disconnects it, returning once the link
    /// is down (or `timeout` passed): the fleet's next holder must not meet
    /// this gateway's connection.
    public func releaseFromFleet(_ address: String, timeout: Duration = .seconds(10)) async {
        guard let hold = fleetHolds.withLock({ $0.removeValue(forKey: address) }), let device = BluetoothAddress(address)
        else { return }
        for id in hold.subscriptionIDs { _ = standing.remove(id) }
        let via = keeper.keptDevice(device, adapter: hold.adapter)?.via
        keeper.release(device, adapter: hold.adapter)
        try? await central.disconnect(device, adapter: via, timeout: timeout)
    }
}
