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

/// A characteristic's acquired notification socket, read by the process's
/// `NotifySocketReader` (`reader` is its id there), whose wake-ups the bus
/// connection's loop thread watches. While it is open the mirror shows the
/// characteristic as notifying: bluetoothd leaves `Notifying` false for an
/// acquired session, but for the central's users it notifies.
struct AcquiredNotify {
    let id: UInt64
    var reader: UInt64?
    var watch: DescriptorWatch?

    /// Stops watching and reading; the reader closes the socket, which is
    /// bluetoothd's StopNotify for it.
    func close() {
        watch?.cancel()
        if let reader { NotifySocketReader.shared.remove(reader) }
    }
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
            acquired.close()
            return
        }
        _ = try await call(path, GattCharacteristic1.interface, "StopNotify", deadline: deadline)
    }

    /// Hands the socket to the process's reader thread, and delivers what
    /// it reads on the bus connection's loop thread: values reach
    /// subscribers in the order they came, as the signal path's do, and a
    /// busy loop leaves them queued rather than dropped by bluetoothd.
    private func adoptNotifySocket(_ fd: UnixFD, of path: ObjectPath) throws(BlueZError) {
        guard let wake = NotifySocketReader.pipe() else {
            Glibc.close(fd.rawValue)
            throw BlueZError(.failed, "cannot read the notification socket: pipe failed (errno \(errno))")
        }
        guard let reader = NotifySocketReader.shared.add(fd: fd.rawValue, wake: wake.write) else {
            for descriptor in [fd.rawValue, wake.read, wake.write] { Glibc.close(descriptor) }
            throw BlueZError(.failed, "cannot read the notification socket: the reader thread has no control pipe")
        }
        let (id, previous) = state.withLock { state -> (UInt64, AcquiredNotify?) in
            let id = state.makeID()
            defer { state.acquiredNotify[path] = AcquiredNotify(id: id, reader: reader) }
            return (id, state.acquiredNotify[path])
        }
        previous?.close()
        let watch: DescriptorWatch
        do {
            // The reader closes its end of `wake` once the socket is
            // removed, which ends this watch with a hang-up.
            watch = try connection.watch(UnixFD(wake.read)) { [weak self] event, wakeFD in
                switch event {
                case .readable: self?.deliverNotifySocket(reader, wakeFD, of: path)
                case .hangup, .connectionClosed: Task { await self?.notifySocketEnded(path, id: id) }
                }
            }
        } catch {
            NotifySocketReader.shared.remove(reader)
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

    /// What the reader took from the socket, one value each packet, decided
    /// under the central's lock and delivered after it, a bounded number a
    /// wake-up (the loop returns to the bus between two). A socket that hung
    /// up is removed once all it held is delivered; the watch's hang-up then
    /// ends the subscription's socket (`notifySocketEnded`).
    private func deliverNotifySocket(_ reader: UInt64, _ wakeFD: UnixFD, of path: ObjectPath) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            while Glibc.read(wakeFD.rawValue, buffer.baseAddress, buffer.count) > 0 {}
        }
        let (values, more, hungUp) = NotifySocketReader.shared.take(reader, limit: Self.notifyValuesPerWakeup)
        if !values.isEmpty {
            update { state in
                for value in values { deliver(value, of: path, in: &state) }
            }
        }
        if more { NotifySocketReader.shared.wakeAgain(reader) }
        if hungUp { NotifySocketReader.shared.remove(reader) }
    }

    /// How many values one wake-up delivers before the loop polls again.
    private static let notifyValuesPerWakeup = 1024

    /// The socket hung up: bluetoothd shut it down because the link dropped
    /// (it does so before it reports `Connected` false), because a client
    /// called StopNotify, or because it exited. One round trip tells which:
    /// bluetoothd flushes its property changes before any reply, so the
    /// mirror then shows the disconnection, which ends the subscription as
    /// on the StartNotify path; if the link is up the subscription is
    /// started again, and if bluetoothd is gone the rebuild restores it.
    func notifySocketEnded(_ path: ObjectPath, id: UInt64) async {
        let (ended, devicePath) = state.withLock { state -> (AcquiredNotify?, ObjectPath?) in
            guard state.acquiredNotify[path]?.id == id else { return (nil, nil) }
            let ended = state.acquiredNotify.removeValue(forKey: path)
            state.tree.characteristics[path]?.notifying = false
            guard state.subscriptions[path] != nil else { return (ended, nil) }
            state.subscriptions[path]?.notifying = false
            return (ended, state.subscriptions[path]?.devicePath)
        }
        // The watch ended with the bus connection, not with the socket: the
        // reader still holds it until it is told.
        ended?.close()
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
