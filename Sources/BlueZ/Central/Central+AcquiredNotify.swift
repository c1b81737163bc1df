import DBus
import Glibc

// The BlueZ side of a subscription: AcquireNotify (the fd path) where the
// characteristic offers it, StartNotify otherwise. Subscriptions
// (Central+Notifications) decide when to start and stop; this file decides
// how, and reads the acquired sockets.
//
// bluetoothd 5.66 (src/gatt-client.c, and seen in the VM rig): AcquireNotify
// answers a SOCK_SEQPACKET socket and the ATT MTU; each notification is one
// packet, and no `Value` change is signalled. The session is exclusive
// (NotPermitted "Notify acquired" for StartNotify and AcquireNotify of any
// client while it exists, InProgress while any StartNotify session does).
// Closing the socket ends it; bluetoothd shuts it down when the link drops
// (the reader sees a hang-up) and when any client calls StopNotify.

/// A characteristic's acquired notification socket, watched on the bus
/// connection's loop thread. While it is open the mirror shows the
/// characteristic as notifying: bluetoothd leaves `Notifying` false for an
/// acquired session, but for the central's users it notifies.
struct AcquiredNotify {
    let id: UInt64
    var watch: DescriptorWatch?
}

extension Central {
    /// Starts bluetoothd's notifications of `path` for this central:
    /// AcquireNotify when the options and the characteristic allow it,
    /// StartNotify otherwise and whenever AcquireNotify is refused.
    func startBlueZNotify(_ path: ObjectPath, deadline: ContinuousClock.Instant) async throws(BlueZError) {
        let (acquirable, held) = state.withLock { state -> (Bool, Bool) in
            // Still holding the socket (a subscription that ended before
            // its start completed left it open): it serves the new one, and
            // bluetoothd would refuse a second AcquireNotify and StartNotify.
            if state.acquiredNotify[path] != nil {
                state.tree.characteristics[path]?.notifying = true
                return (true, true)
            }
            guard let characteristic = state.tree.characteristics[path] else { return (false, false) }
            return (characteristic.properties.contains(.notify) && characteristic.offersAcquireNotify, false)
        }
        if held { return }
        // A bus reached over TCP cannot carry the socket.
        if options.notifyPath == .acquire, acquirable, connection.canPassUnixFDs {
            do {
                let reply = try await call(path, GattCharacteristic1.interface, "AcquireNotify", [.vardict([:])], deadline: deadline)
                if let fd = reply.first?.unixFD {
                    try adoptNotifySocket(fd, of: path)
                    return
                }
            } catch where error.code == .timeout || error.code == .bluetoothdUnavailable {
                throw error
            } catch {
                // Refused (a StartNotify session of another client, an older
                // bluetoothd, a bus that cannot pass descriptors): the
                // signal path serves the same values.
            }
        }
        _ = try await call(path, GattCharacteristic1.interface, "StartNotify", deadline: deadline)
    }

    /// Stops them: closing an acquired socket is bluetoothd's StopNotify
    /// for it.
    func stopBlueZNotify(_ path: ObjectPath, deadline: ContinuousClock.Instant) async throws(BlueZError) {
        if let acquired = state.withLock({ state -> AcquiredNotify? in
            guard let acquired = state.acquiredNotify.removeValue(forKey: path) else { return nil }
            state.tree.characteristics[path]?.notifying = false
            return acquired
        }) {
            acquired.watch?.cancel()
            return
        }
        _ = try await call(path, GattCharacteristic1.interface, "StopNotify", deadline: deadline)
    }

    /// Reads the socket on the bus connection's loop thread: no thread per
    /// characteristic, and values reach subscribers in order with the
    /// signals around them.
    private func adoptNotifySocket(_ fd: UnixFD, of path: ObjectPath) throws(BlueZError) {
        let (id, previous) = state.withLock { state -> (UInt64, AcquiredNotify?) in
            let id = state.makeID()
            defer { state.acquiredNotify[path] = AcquiredNotify(id: id) }
            return (id, state.acquiredNotify[path])
        }
        previous?.watch?.cancel()
        let watch: DescriptorWatch
        do {
            watch = try connection.watch(fd) { [weak self] event, fd in
                switch event {
                case .readable: self?.readNotifySocket(fd, of: path)
                case .hangup, .connectionClosed: Task { await self?.notifySocketEnded(path, id: id) }
                }
            }
        } catch {
            state.withLock { state in
                if state.acquiredNotify[path]?.id == id { state.acquiredNotify[path] = nil }
            }
            throw BlueZError.wrapping(error)
        }
        let kept = state.withLock { state -> Bool in
            guard state.acquiredNotify[path]?.id == id else { return false }
            state.acquiredNotify[path]?.watch = watch
            state.tree.characteristics[path]?.notifying = true
            return true
        }
        // It ended (hung up, or stopped) before the watch was stored.
        if !kept { watch.cancel() }
    }

    /// Every packet waiting on the socket, one value each, decided under
    /// one lock and delivered after it, on the loop thread in the order the
    /// packets came (as the signal path's values are).
    private func readNotifySocket(_ fd: UnixFD, of path: ObjectPath) {
        var values: [[UInt8]] = []
        // An ATT value is at most 512 bytes. On the stack: this runs for
        // every readable event of every acquired socket.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
            while true {
                let count = recv(fd.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                guard count > 0 else { break }
                values.append(Array(buffer[..<count]))
            }
        }
        guard !values.isEmpty else { return }
        update { state in
            for value in values { deliver(value, of: path, in: &state) }
        }
    }

    /// The socket hung up: bluetoothd shut it down because the link dropped
    /// (it does so before it reports `Connected` false), because a client
    /// called StopNotify, or because it exited. One round trip tells which:
    /// bluetoothd flushes its property changes before any reply, so the
    /// mirror then shows the disconnection, which ends the subscription as
    /// on the StartNotify path; if the link is up the subscription is
    /// started again, and if bluetoothd is gone the rebuild restores it.
    func notifySocketEnded(_ path: ObjectPath, id: UInt64) async {
        let devicePath = state.withLock { state -> ObjectPath? in
            guard state.acquiredNotify[path]?.id == id else { return nil }
            state.acquiredNotify[path] = nil
            state.tree.characteristics[path]?.notifying = false
            guard state.subscriptions[path] != nil else { return nil }
            state.subscriptions[path]?.notifying = false
            return state.subscriptions[path]?.devicePath
        }
        guard let devicePath else { return }
        let reply = try? await call(
            devicePath, ObjectManager.properties, "Get", [.string(Device1.interface.rawValue), .string("Connected")],
            deadline: .now + options.defaultTimeout)
        guard let connected = reply?.first?.bool else { return }
        if connected {
            await restoreNotify(path)
            return
        }
        update { state in
            let address = state.tree.devices[devicePath].map { "\($0.address)" } ?? devicePath.rawValue
            endSubscriptions(
                ofDevice: devicePath,
                SubscriptionEnd(.deviceDisconnected, BlueZError(.notConnected, "the device \(address) disconnected")),
                in: &state)
        }
    }
}
