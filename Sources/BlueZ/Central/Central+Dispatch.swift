import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// From reducer changes to consumers. Runs under the state lock and only
// decides: what consumers are to be told goes to `state.deliveries`, made
// in order once the lock is released (`Central.update`), and what must wait
// for the lock's release otherwise goes to `effects`. The one exception is
// the yield to a discovery session's stream (see `CentralState`); such a
// yield can wait for the consuming task's status lock (held while that task
// is being cancelled), so no discovery stream's termination handler may
// wait for the state lock.

extension Central {
    func dispatch(
        _ changes: [TreeChange], in state: inout CentralState, effects: inout Effects, fromSnapshot: Bool = false
    ) {
        let hasEvents = eventBroadcast.subscriberCount > 0
        for change in changes {
            switch change {
            case .characteristicValue(let path, let value):
                deliver(value, of: path, in: &state)

            case .deviceAdded(let path):
                if !fromSnapshot, state.tree.devices[path]?.advertisement.rssi != nil {
                    state.tree.devices[path]?.lastSeen = Date()
                }
                guard let device = state.tree.devices[path] else { continue }
                if hasEvents { emit(.deviceDiscovered(device), in: &state) }
                if !fromSnapshot, device.advertisement.rssi != nil { report(device, in: &state) }

            case .deviceChanged(let path, let keys):
                // An RSSI invalidated (discovery stopped) is no sighting.
                if keys.contains(where: Device1.heardKeys.contains), state.tree.devices[path]?.advertisement.rssi != nil {
                    state.tree.devices[path]?.lastSeen = Date()
                }
                guard let device = state.tree.devices[path] else { continue }
                if hasEvents { emit(.deviceUpdated(device), in: &state) }
                if !state.sessions.isEmpty, keys.contains(where: Device1.advertisementKeys.contains) {
                    report(device, in: &state)
                }

            case .deviceRemoved(let device):
                if hasEvents { emit(.deviceLost(device), in: &state) }
                state.connectedByUs.remove(device.path)
                // In place, as in `report`: no copy of a session's table per device.
                for id in Array(state.sessions.keys) {
                    guard state.sessions[id]?.forget(device.path) == true else { continue }
                    state.sessions[id]?.continuation.yield(.lost(device))
                }
                endSubscriptions(
                    ofDevice: device.path,
                    SubscriptionEnd(.deviceRemoved, BlueZError(.notFound, "the device \(device.address) was removed")),
                    in: &state)

            case .deviceConnected(let path):
                if hasEvents, let device = state.tree.devices[path] { emit(.connected(device), in: &state) }

            case .deviceDisconnected(let path, let reason):
                state.connectedByUs.remove(path)
                let device = state.tree.devices[path]
                if hasEvents, let device { emit(.disconnected(device, reason: reason), in: &state) }
                let address = device.map { "\($0.address)" } ?? path.rawValue
                endSubscriptions(
                    ofDevice: path,
                    SubscriptionEnd(
                        .deviceDisconnected,
                        BlueZError(.notConnected, "the device \(address) disconnected" + (reason.map { " (\($0))" } ?? ""))),
                    in: &state)

            case .servicesResolved(let path):
                if hasEvents, let device = state.tree.devices[path] { emit(.servicesResolved(device), in: &state) }

            case .adapterAdded(let path):
                guard let adapter = state.tree.adapters[path] else { continue }
                if hasEvents { emit(.adapterState(adapter: adapter.id, adapter.state), in: &state) }
                if adapter.powered, state.sessions.values.contains(where: { $0.adapterPath == path }) {
                    effects.reconcile.insert(path)
                }

            case .adapterChanged(let path, let keys):
                guard let adapter = state.tree.adapters[path] else { continue }
                if keys.contains("Powered") {
                    if hasEvents { emit(.adapterState(adapter: adapter.id, adapter.state), in: &state) }
                    if adapter.powered {
                        effects.reconcile.insert(path)
                    } else {
                        // Powering off ends every discovery client's session
                        // in bluetoothd; ours resume when it comes back.
                        state.scanning[path] = nil
                        interruptSessions(on: path, BlueZError(.poweredOff, "\(adapter.id) was powered off"), in: &state)
                    }
                } else if hasEvents {
                    emit(.adapterUpdated(adapter), in: &state)
                }

            case .adapterRemoved(let adapter):
                if hasEvents { emit(.adapterState(adapter: adapter.id, .unavailable), in: &state) }
                state.scanning[adapter.path] = nil
                interruptSessions(
                    on: adapter.path, BlueZError(.adapterUnavailable, "\(adapter.id) went away"), in: &state)

            case .gattRemoved(let path):
                if let record = state.subscriptions.removeValue(forKey: path) {
                    let end = SubscriptionEnd(.characteristicRemoved, BlueZError(.notFound, "the characteristic was removed"))
                    for subscriber in record.subscribers.values { state.deliveries.append(.ended(subscriber, end)) }
                }

            case .gattAdded:
                break
            }
        }
        if !state.waiters.isEmpty {
            for (id, waiter) in state.waiters {
                guard let outcome = waiter.check(state.tree, changes) else { continue }
                state.deliveries.append(.outcome(waiter.promise, outcome))
                state.waiters[id] = nil
            }
        }
        // A link down, a device gone or an adapter back may free a slot.
        if !state.slots.queue.isEmpty { Self.serveSlots(in: &state, limits: options.slotLimits) }
    }

    /// The hot path of notifications: one dictionary lookup, one value built
    /// from the subscription's cached identity, one delivery queued for all
    /// its subscribers (made once the lock is released, one call each).
    func deliver(_ value: [UInt8], of path: ObjectPath, in state: inout CentralState) {
        let record = state.subscriptions[path]
        guard record != nil || eventBroadcast.unfilteredSubscriberCount > 0 else { return }
        let item: CharacteristicValue
        if let record {
            item = CharacteristicValue(
                adapter: record.adapter, device: record.device, service: record.service,
                characteristic: record.characteristic, handle: record.handle, value: value, timestamp: Date())
            state.deliveries.append(.notification(.value(item), to: record.subscribers))
        } else {
            let tree = state.tree
            guard let characteristic = tree.characteristics[path],
                let device = tree.devicePath(of: path).flatMap({ tree.devices[$0] })
            else { return }
            item = CharacteristicValue(
                adapter: device.adapter, device: device.address, service: tree.services[characteristic.servicePath]?.uuid,
                characteristic: characteristic.uuid, handle: characteristic.handle, value: value, timestamp: Date())
        }
        emit(.characteristicValue(item), in: &state)
    }

    /// Offers an advertisement to the discovery sessions of its adapter.
    ///
    /// Each session is changed in place, through the dictionary's modify
    /// accessor, with no other copy of it alive: a second reference to the
    /// session (as iterating `(id, session)` and assigning back into
    /// `state.sessions[id]` keeps) makes every advertisement copy the
    /// session's whole `reported` table, O(devices) per report.
    func report(_ device: Device, in state: inout CentralState) {
        guard let adapterPath = device.path.parent else { return }
        for id in Array(state.sessions.keys) where state.sessions[id]?.adapterPath == adapterPath {
            state.sessions[id]?.offer(device)
        }
    }

    private func interruptSessions(on adapterPath: ObjectPath, _ reason: BlueZError, in state: inout CentralState) {
        for (id, session) in state.sessions where session.adapterPath == adapterPath {
            session.continuation.yield(.interrupted(reason))
            state.sessions[id]?.reported = [:]
            state.sessions[id]?.reportedAt = [:]
            state.sessions[id]?.interrupted = true
            if session.monitored != nil { state.sessions[id]?.monitored = [] }
        }
    }

    /// Ends the subscriptions of a device's characteristics with `end`.
    func endSubscriptions(ofDevice devicePath: ObjectPath, _ end: SubscriptionEnd, in state: inout CentralState) {
        guard !state.subscriptions.isEmpty else { return }
        for (path, record) in state.subscriptions where record.devicePath == devicePath {
            state.subscriptions[path] = nil
            for subscriber in record.subscribers.values { state.deliveries.append(.ended(subscriber, end)) }
        }
    }
}
