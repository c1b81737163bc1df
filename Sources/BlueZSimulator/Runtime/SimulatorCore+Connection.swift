import DBus

extension SimulatorCore {
    func device(at path: ObjectPath) throws(DBusError) -> DeviceState {
        guard let device = devices[path], device.exported else {
            throw DBusError(.unknownObject, "No such object path '\(path)'")
        }
        return device
    }

    /// Device1.Connect (`dev_connect` / `device_connect_le`): returns once
    /// the LE link is up; services resolve afterwards.
    func connect(_ path: ObjectPath) async throws(DBusError) {
        let device = try device(at: path)
        guard let adapter = adapter(of: device), adapter.powered else { throw BluetoothdError.notReady }
        if device.connected { return }
        // A second Connect while one is pending: device_connect_le finds
        // the ATT socket already connecting and bluetoothd replies with
        // strerror(EALREADY) (seen in the VM rig; not InProgress).
        guard !device.connecting else { throw BluetoothdError.failed("Operation already in progress") }
        device.connecting = true
        device.connectionGeneration &+= 1
        let generation = device.connectionGeneration
        let spec = device.spec
        // An absent peripheral never answers: the kernel gives up after
        // its LE connection timeout.
        let reachable = device.inRange && spec.advertising.connectable
        await sleep(scaled: reachable ? spec.connection.delay : max(spec.connection.delay, 20))
        guard device.connectionGeneration == generation, device.connecting, devices[path] === device else {
            throw BluetoothdError.failed("le-connection-abort-by-local")
        }
        device.connecting = false
        guard device.inRange, spec.advertising.connectable else {
            seen(device)
            throw BluetoothdError.failed("le-connection-timeout")
        }
        if device.connectFailuresLeft > 0 {
            device.connectFailuresLeft -= 1
            seen(device)
            throw BluetoothdError.failed(spec.connection.error)
        }
        device.connected = true
        counters.connections += 1
        updateDevice(device, ["Connected": .boolean(true)], emit: shouldEmitConnected())
        Task { [weak self] in
            await self?.sleep(scaled: spec.connection.resolveDelay)
            await self?.resolveServices(path, generation: generation)
        }
    }

    private func shouldEmitConnected() -> Bool {
        switch options.connectedSignal {
        case .always: return true
        case .never: return false
        case .sometimes(let probability): return Double(random.next() % 1_000_000) / 1_000_000 < probability
        }
    }

    /// The GATT client finished discovery: the objects appear, then
    /// ServicesResolved turns true.
    func resolveServices(_ path: ObjectPath, generation: UInt64) {
        guard let device = devices[path], device.connected, device.connectionGeneration == generation else { return }
        // Observed order (VM rig, dbus-monitor): the GATT objects (one
        // InterfacesAdded each), then one PropertiesChanged with UUIDs and
        // ServicesResolved, then the battery plugin's Battery1.
        exportGATT(device)
        device.servicesResolved = true
        updateDevice(device, ["UUIDs": .strings(deviceUUIDs(device)), "ServicesResolved": .boolean(true)])
        exportBattery(device)
        startTicks(device)
    }

    /// Device1.Disconnect: succeeds whether or not the device is connected;
    /// a pending Connect fails. A connected device is taken down as
    /// bluetoothd 5.66 does it (`device_request_disconnect`, measured with
    /// scripts/bluez-vm-probe/probe-disconnect.py): its profiles get
    /// DISCONNECT_TIMER (2 s), during which GATT still works; then the ATT
    /// channel closes (`ServicesResolved` false, a signal of its own), the
    /// call returns, and the link is reported down 0.5 to 1.2 s later
    /// (`Connected` false, another signal). The e2e suite saw the same.
    func disconnect(_ path: ObjectPath) async throws(DBusError) {
        let device = try device(at: path)
        guard device.connected || device.connecting else { return }
        let generation = device.connectionGeneration
        guard device.connected else {
            await sleep(scaled: 0.1)
            guard device.connectionGeneration == generation, device.connecting else { return }
            dropConnection(device)
            return
        }
        await sleep(scaled: 2)
        guard device.connectionGeneration == generation, device.connected else { return }
        if device.servicesResolved {
            device.servicesResolved = false
            updateDevice(device, ["ServicesResolved": .boolean(false)])
        }
        Task { [weak self] in
            await self?.sleep(scaled: 0.5)
            await self?.linkDown(path, generation: generation)
        }
    }

    /// The end of a local Disconnect: the link is down.
    private func linkDown(_ path: ObjectPath, generation: UInt64) {
        guard let device = devices[path], device.connectionGeneration == generation, device.connected else { return }
        dropConnection(device)
    }

    /// The link is gone (power off, out of range, removal, the end of a
    /// Disconnect): `Connected` turns false, with `ServicesResolved` in the
    /// same signal unless it already went.
    func dropConnection(_ device: DeviceState) {
        device.connectionGeneration &+= 1
        device.connecting = false
        device.pairing = false
        guard device.connected else { return }
        device.connected = false
        endAcquiredSockets(device)
        device.notifySessions.removeAll()
        device.pendingNotify.removeAll()
        // Requests on their way fail with the link.
        let held = device.heldRequests
        device.heldRequests = []
        for request in held { request.resume() }
        var changes: [String: Value] = ["Connected": .boolean(false)]
        if device.servicesResolved { changes["ServicesResolved"] = .boolean(false) }
        device.servicesResolved = false
        // The GATT objects stay (bluetoothd keeps the attribute cache while
        // the device object lives; reads then fail with "Not connected");
        // only the Battery1 of the battery plugin goes.
        for index in device.database.characteristics.indices { setNotifying(device, index, false) }
        bus.objects.remove([Self.batteryInterface], at: device.path)
        // One PropertiesChanged for both, as bluetoothd sends it when the
        // link is lost.
        updateDevice(device, changes)
        seen(device)
    }

    /// Device1.Pair: connects if needed, then bonds, asking the caller's
    /// agent (or the default one) what the method needs
    /// (SimulatorCore+Agent.swift).
    func pair(_ path: ObjectPath, sender: BusName?) async throws(DBusError) {
        let device = try device(at: path)
        guard let adapter = adapter(of: device), adapter.powered else { throw BluetoothdError.notReady }
        guard !device.paired else { throw BluetoothdError.alreadyExists }
        guard !device.pairing else { throw BluetoothdError.inProgress }
        device.pairing = true
        defer { device.pairing = false }
        if !device.connected { try await connect(path) }
        try await bond(device, agent: agent(for: sender))
    }

    /// The SMP exchange; also run when a read or write needs encryption
    /// (with the default agent).
    func bond(_ device: DeviceState, agent: Agent?) async throws(DBusError) {
        let generation = device.connectionGeneration
        try await authenticate(device, agent: agent, generation: generation)
        await sleep(scaled: device.spec.pairing.delay)
        guard device.connected, device.connectionGeneration == generation else {
            throw BluetoothdError.authenticationCanceled
        }
        guard device.spec.pairing.accept else { throw BluetoothdError.authenticationFailed }
        guard !device.paired else { return }
        device.paired = true
        updateDevice(device, ["Paired": .boolean(true)])
        updateDevice(device, ["Bonded": .boolean(true)])
    }

    func cancelPairing(_ path: ObjectPath) throws(DBusError) {
        let device = try device(at: path)
        guard device.pairing else { throw BluetoothdError.doesNotExist }
        device.pairing = false
        device.connectionGeneration &+= 1
        if let agent = device.askedAgent { cancelQuestion(agent) }
        if device.connected { dropConnection(device) }
    }

    func setTrusted(_ path: ObjectPath, _ trusted: Bool) throws(DBusError) {
        try device(at: path).trusted = trusted
    }

    /// Blocking a device drops its connection.
    func setBlocked(_ path: ObjectPath, _ blocked: Bool) throws(DBusError) {
        let device = try device(at: path)
        device.blocked = blocked
        if blocked, device.connected || device.connecting { dropConnection(device) }
    }
}
