import BlueZ
import Synchronization

/// Notices bluetoothd pairing a device on its own, which the gateway did
/// not ask for: with the default agent and `NoInputNoOutput`, a read or
/// write of an encrypted characteristic makes bluetoothd raise the link's
/// security and pair by Just Works, and the operation then succeeds. The
/// gateway publishes `pairing-succeeded` for it as for its own pairings.
///
/// A device is "newly paired" when an event shows it paired after one
/// showed it unpaired, unless the gateway's own pairing of it is running
/// (that pairing publishes its own event).
final class PairingWatch: Sendable {
    private struct Key: Hashable {
        let adapter: String
        let address: BluetoothAddress
    }

    private struct State {
        var paired: [Key: Bool] = [:]
        var pairedByGateway: Set<Key> = []
    }

    private let state = Mutex(State())

    /// The device in `event` if bluetoothd has just paired it by itself.
    func newlyPaired(_ event: CentralEvent) -> Device? {
        let device: Device
        switch event {
        case .deviceDiscovered(let seen), .deviceUpdated(let seen), .connected(let seen), .servicesResolved(let seen),
            .disconnected(let seen, _):
            device = seen
        case .deviceLost(let seen):
            state.withLock { _ = $0.paired.removeValue(forKey: Key(adapter: seen.adapter, address: seen.address)) }
            return nil
        default:
            return nil
        }
        let key = Key(adapter: device.adapter, address: device.address)
        return state.withLock { state in
            let before = state.paired.updateValue(device.paired, forKey: key)
            return before == false && device.paired && !state.pairedByGateway.contains(key) ? device : nil
        }
    }

    /// The gateway starts pairing `address` itself.
    func gatewayPairs(_ address: BluetoothAddress, adapter: String) {
        state.withLock { _ = $0.pairedByGateway.insert(Key(adapter: adapter, address: address)) }
    }

    /// The gateway's pairing ended; `device` is how it left the device.
    func gatewayPaired(_ device: Device) {
        let key = Key(adapter: device.adapter, address: device.address)
        state.withLock { state in
            state.pairedByGateway.remove(key)
            state.paired[key] = device.paired
        }
    }
}
