import DBus
import Glibc

// GattCharacteristic1.AcquireNotify and AcquireWrite as bluetoothd 5.66
// serves them (src/gatt-client.c: characteristic_acquire_notify,
// characteristic_acquire_write, create_sock, notify_io_cb, sock_read,
// sock_hup), checked in the VM rig (docs/simulator.md, "AcquireNotify and
// AcquireWrite"): a SOCK_SEQPACKET socket pair per acquisition, the client's
// end and the ATT MTU in the reply, one packet per value, exclusive with
// StartNotify, ended by the client closing its end, by StopNotify, or by
// the link going (the client then sees a hang-up).

extension SimulatorCore {
    enum AcquiredKind { case notify, write }

    /// AcquireNotify: Failed "Not connected" without a link, NotPermitted
    /// "Notify acquired" while a socket exists (or is being made),
    /// InProgress while any client has a StartNotify session, NotSupported
    /// without the notify flag (indications have no fd path). The CCC is
    /// written first; the reply comes once it is.
    func acquireNotify(_ path: ObjectPath, client: BusName?) async throws(DBusError) -> [Value] {
        let (device, index) = try characteristic(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        if device.acquiredNotify[index] != nil || device.acquiringNotify.contains(index) {
            throw BluetoothdError.notPermitted("Notify acquired")
        }
        if device.notifySessions[index]?.isEmpty == false { throw BluetoothdError.inProgress }
        guard device.database.characteristics[index].spec.flags.contains("notify") else {
            throw BluetoothdError.notSupported
        }
        let client = client ?? BusName(unchecked: ":0.0")
        // The acquirer is a notify client like StartNotify's (so the CCC
        // reads as enabled); values before the socket exists are dropped.
        device.notifySessions[index] = [client]
        device.pendingNotify.insert(index)
        device.acquiringNotify.insert(index)
        let generation = device.connectionGeneration
        await sleep(scaled: 0.05)
        device.pendingNotify.remove(index)
        device.acquiringNotify.remove(index)
        guard device.connectionGeneration == generation, device.connected else {
            if device.notifySessions[index]?.contains(client) == true { device.notifySessions[index] = nil }
            throw BluetoothdError.failed("Not connected")
        }
        let (socket, clientEnd) = try makeSocket(device, index, owner: client, kind: .notify)
        device.acquiredNotify[index] = socket
        setAcquired(device, index, .notify, true)
        return [.unixFD(.transferring(clientEnd)), .uint16(socket.mtu)]
    }

    /// AcquireWrite: Failed "Not connected", NotPermitted "Write acquired"
    /// while a socket exists, NotSupported without write-without-response.
    /// Each packet the client writes is one Write Command.
    func acquireWrite(_ path: ObjectPath, client: BusName?) throws(DBusError) -> [Value] {
        let (device, index) = try characteristic(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        if device.acquiredWrite[index] != nil { throw BluetoothdError.notPermitted("Write acquired") }
        guard device.database.characteristics[index].spec.flags.contains("write-without-response") else {
            throw BluetoothdError.notSupported
        }
        let (socket, clientEnd) = try makeSocket(device, index, owner: client ?? BusName(unchecked: ":0.0"), kind: .write)
        device.acquiredWrite[index] = socket
        setAcquired(device, index, .write, true)
        return [.unixFD(.transferring(clientEnd)), .uint16(socket.mtu)]
    }

    /// The pair, with bluetoothd's end watched on the bus connection's loop:
    /// what the client writes is applied in order, then its closing ends
    /// the acquisition (`sock_read`, `sock_hup`).
    private func makeSocket(
        _ device: DeviceState, _ index: Int, owner: BusName, kind: AcquiredKind
    ) throws(DBusError) -> (AcquiredSocket, Int32) {
        guard let (ours, theirs) = AcquiredSocket.pair() else {
            throw BluetoothdError.failed(String(cString: strerror(errno)))
        }
        let socket = AcquiredSocket(owner: owner, mtu: device.spec.connection.mtu, sendFD: ours)
        let (packets, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        do {
            socket.watch = try bus.watch(UnixFD(dup(ours))) { event, fd in
                switch event {
                case .readable:
                    // bluetoothd reads into 512 bytes; in the VM rig no
                    // longer packet reached the peripheral, so none does here.
                    var buffer = [UInt8](repeating: 0, count: 512)
                    while true {
                        let count = buffer.withUnsafeMutableBytes {
                            recv(fd.rawValue, $0.baseAddress, 512, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
                        }
                        guard count > 0 else { break }
                        if count <= 512 { continuation.yield(Array(buffer[..<count])) }
                    }
                case .hangup, .connectionClosed:
                    continuation.finish()
                }
            }
        } catch {
            socket.close()
            _ = Glibc.close(theirs)
            throw BluetoothdError.failed(error.message)
        }
        let devicePath = device.path
        let id = ObjectIdentifier(socket)
        Task { [weak self] in
            for await packet in packets { await self?.acquiredWrite(devicePath, index, id, packet) }
            await self?.acquiredSocketClosed(devicePath, index, id, kind)
        }
        return (socket, theirs)
    }

    /// A packet from the client: a Write Command of the value, unless it
    /// does not fit the MTU (bluetoothd's ATT layer refuses to send it, and
    /// nobody is told).
    private func acquiredWrite(_ devicePath: ObjectPath, _ index: Int, _ id: ObjectIdentifier, _ bytes: [UInt8]) {
        guard let device = devices[devicePath], device.connected,
            let socket = [device.acquiredWrite[index], device.acquiredNotify[index]].first(where: {
                $0.map(ObjectIdentifier.init) == id
            }) ?? nil,
            bytes.count <= Int(socket.mtu) - 3, let path = characteristicPath(device, index)
        else { return }
        counters.acquiredWrites += 1
        if device.characteristics[index].write(bytes, offset: 0) == nil { echoed(device, index, path) }
    }

    /// The client closed its end (or the bus connection went). A socket
    /// that already ended (and was closed then) is no longer registered.
    private func acquiredSocketClosed(_ devicePath: ObjectPath, _ index: Int, _ id: ObjectIdentifier, _ kind: AcquiredKind) {
        guard let device = devices[devicePath] else { return }
        switch kind {
        case .notify where device.acquiredNotify[index].map(ObjectIdentifier.init) == id: endAcquiredNotify(device, index)
        case .write where device.acquiredWrite[index].map(ObjectIdentifier.init) == id: endAcquiredWrite(device, index)
        default: break
        }
    }

    /// `destroy_sock` of the notify socket: the client sees a hang-up, the
    /// notify session goes (the CCC is cleared when it was the last one),
    /// NotifyAcquired turns false.
    func endAcquiredNotify(_ device: DeviceState, _ index: Int) {
        guard let socket = device.acquiredNotify.removeValue(forKey: index) else { return }
        socket.close()
        if device.notifySessions[index]?.remove(socket.owner) != nil, device.notifySessions[index]?.isEmpty == true {
            device.notifySessions[index] = nil
        }
        setAcquired(device, index, .notify, false)
    }

    func endAcquiredWrite(_ device: DeviceState, _ index: Int) {
        guard let socket = device.acquiredWrite.removeValue(forKey: index) else { return }
        socket.close()
        setAcquired(device, index, .write, false)
    }

    /// The link went (or the device object, or bluetoothd): every socket
    /// is shut down (`btd_gatt_client_disconnected` shuts down the client's
    /// ios), so their clients see a hang-up.
    func endAcquiredSockets(_ device: DeviceState) {
        for index in Array(device.acquiredNotify.keys) { endAcquiredNotify(device, index) }
        for index in Array(device.acquiredWrite.keys) { endAcquiredWrite(device, index) }
    }

    private func setAcquired(_ device: DeviceState, _ index: Int, _ kind: AcquiredKind, _ acquired: Bool) {
        guard device.exported, let path = characteristicPath(device, index), bus.objects.contains(path) else { return }
        let name = kind == .notify ? "NotifyAcquired" : "WriteAcquired"
        try? bus.objects.update([name: .boolean(acquired)], of: Self.characteristicInterface, at: path)
    }
}
