import DBus

extension SimulatorCore {
    // MARK: Objects

    func exportRoot() throws {
        guard let interfaces else { return }
        try bus.objects.add([(interfaces.agentManager, [:]), (interfaces.profileManager, [:])], at: "/org/bluez")
    }

    func addAdapter(_ spec: Scenario.Adapter) throws {
        guard let interfaces else { return }
        let path = try ObjectPath("/org/bluez").appending(spec.id)
        let adapter = AdapterState(spec: spec, path: path)
        adapters[spec.id] = adapter
        adapterOrder.append(spec.id)
        var served: [(ExportedInterface, [String: Value])] = [
            (interfaces.adapter, Interfaces.adapterProperties(adapter)), (interfaces.gattManager, [:]),
            (interfaces.advertisingManager, Interfaces.advertisingManagerProperties),
        ]
        // bluetoothd serves the monitor manager only with -E (experimental).
        if options.experimental { served.append((interfaces.monitorManager, Interfaces.monitorManagerProperties)) }
        try bus.objects.add(served, at: path)
    }

    func adapter(at path: ObjectPath) throws(DBusError) -> AdapterState {
        guard let adapter = adapters[String(path.lastElement)], adapter.path == path else {
            throw DBusError(.unknownObject, "No such object path '\(path)'")
        }
        return adapter
    }

    /// The adapter a discovering device belongs to.
    func adapter(of device: DeviceState) -> AdapterState? { adapters[device.adapter] }

    func requirePowered(_ path: ObjectPath) throws(DBusError) {
        guard try adapter(at: path).powered else { throw BluetoothdError.notReady }
    }

    func setAdapterAlias(_ path: ObjectPath, _ alias: String) throws(DBusError) {
        try adapter(at: path).alias = alias.isEmpty ? nil : alias
    }

    /// Powering off ends every discovery session and every connection of
    /// the adapter and forgets the devices that were only discovered.
    func setPowered(_ path: ObjectPath, _ powered: Bool) throws(DBusError) {
        let adapter = try adapter(at: path)
        guard adapter.powered != powered else { return }
        adapter.powered = powered
        guard !powered else { return }
        for device in devices.values where device.adapter == adapter.spec.id && (device.connected || device.connecting) {
            dropConnection(device)
        }
        adapter.discoveryClients.removeAll()
        adapter.filters.removeAll()
        invalidateSightings(adapter)
        // bluetoothd forgets the devices it only discovered, then announces
        // `Powered: false, Discovering: false` in one signal (both seen in
        // the VM rig, Discovering even when it was already false). The
        // generic Set path then repeats `Powered: false`.
        for device in devices.values where device.adapter == adapter.spec.id && device.exported && device.isTemporary {
            unexport(device)
        }
        try? bus.objects.update(
            ["Powered": .boolean(false), "Discovering": .boolean(false)], of: "org.bluez.Adapter1", at: adapter.path)
    }

    // MARK: Discovery

    /// `start_discovery` in src/adapter.c: NotReady when off, InProgress
    /// ("Operation already in progress") for a client already discovering.
    func startDiscovery(adapter path: ObjectPath, client: BusName?) throws(DBusError) {
        let adapter = try adapter(at: path)
        guard adapter.powered else { throw BluetoothdError.notReady }
        let client = client ?? BusName(unchecked: ":0.0")
        guard !adapter.discoveryClients.contains(client) else { throw BluetoothdError.busy }
        let wasDiscovering = adapter.isDiscovering
        adapter.discoveryClients.insert(client)
        guard !wasDiscovering else { return }
        try? bus.objects.update(["Discovering": .boolean(true)], of: "org.bluez.Adapter1", at: adapter.path)
        scheduleAdvertisements(adapter)
    }

    /// `stop_discovery`: NotReady when off, Failed "No discovery started"
    /// for a client that is not discovering.
    func stopDiscovery(adapter path: ObjectPath, client: BusName?) throws(DBusError) {
        let adapter = try adapter(at: path)
        guard adapter.powered else { throw BluetoothdError.notReady }
        let client = client ?? BusName(unchecked: ":0.0")
        guard adapter.discoveryClients.remove(client) != nil else {
            throw BluetoothdError.failed("No discovery started")
        }
        // bluetoothd keeps a client's filter only while it discovers.
        adapter.filters[client] = nil
        guard !adapter.isDiscovering else { return }
        if let ends = adapter.scanRestartEnds, ContinuousClock.now < ends {
            // The last client stops while the scan restarts for a new
            // filter: bluetoothd's stop races the restart's, the kernel
            // rejects it, and `stop_discovery_complete` answers Busy, drops
            // the client (its devices' RSSI invalidated) and returns before
            // announcing Discovering false, which stays true until the next
            // discovery. Seen in the e2e suite (bluetoothd.log: MGMT Stop
            // Discovery "complete: 0x0b").
            invalidateSightings(adapter)
            throw BluetoothdError.busy
        }
        discoveryStopped(adapter)
    }

    /// `set_discovery_filter`: NotReady when off; an empty dictionary
    /// clears the client's filter.
    func setDiscoveryFilter(adapter path: ObjectPath, client: BusName?, _ dictionary: [String: Value])
        throws(DBusError)
    {
        let adapter = try adapter(at: path)
        guard adapter.powered else { throw BluetoothdError.notReady }
        let filter = try DiscoveryFilter(dictionary)
        let client = client ?? BusName(unchecked: ":0.0")
        let old = adapter.filters[client]
        adapter.filters[client] = dictionary.isEmpty ? nil : filter
        // A discovering client's new filter restarts the scan
        // (`update_discovery_filter`: MGMT Stop Discovery, then Start).
        if adapter.discoveryClients.contains(client), adapter.filters[client] != old {
            adapter.scanRestartEnds = .now + options.scanRestartWindow
            counters.scanRestarts += 1
        }
    }

    /// The last discovery session ended: bluetoothd invalidates the RSSI of
    /// the devices it found (PropertiesChanged with `RSSI` invalidated,
    /// before `Discovering` turns false), and the devices it will forget
    /// start their TemporaryTimeout from their last sighting.
    func discoveryStopped(_ adapter: AdapterState) {
        // A passive scan for a monitor goes on: bluetoothd leaves the RSSI
        // of the devices as they are (seen in the VM rig).
        if !adapter.passiveScanning { invalidateSightings(adapter) }
        try? bus.objects.update(["Discovering": .boolean(false)], of: "org.bluez.Adapter1", at: adapter.path)
    }

    /// Stops the adapter's advertising reports and invalidates the RSSI
    /// (and TxPower) of the devices it had heard.
    func invalidateSightings(_ adapter: AdapterState) {
        for device in devices.values where device.adapter == adapter.spec.id {
            device.advertisingGeneration &+= 1
            guard device.exported, device.reportedRSSI != nil else { continue }
            device.reportedRSSI = nil
            var invalidated = ["RSSI"]
            if device.spec.txPower != nil { invalidated.append("TxPower") }
            try? bus.objects.update([:], of: "org.bluez.Device1", at: device.path, invalidating: invalidated)
        }
    }

    /// `remove_device`: DoesNotExist for a path that is not one of the
    /// adapter's devices. A connected device is disconnected first: its
    /// Battery1 goes at once, the link about 1.9 s later (bluetoothd's
    /// disconnect timer; seen in the VM rig), then the objects.
    func removeDevice(adapter path: ObjectPath, _ devicePath: ObjectPath) async throws(DBusError) {
        let adapter = try adapter(at: path)
        guard let device = devices[devicePath], device.adapter == adapter.spec.id, device.exported else {
            throw BluetoothdError.doesNotExist
        }
        if device.connected {
            // device_remove cancels a service discovery still running:
            // ServicesResolved will not come for this connection.
            if !device.servicesResolved { device.connectionGeneration &+= 1 }
            bus.objects.remove([Self.batteryInterface], at: device.path)
            await sleep(scaled: 1.9)
            guard devices[devicePath] === device, device.exported else { return }
        }
        if device.connected || device.connecting { dropConnection(device) }
        device.paired = false
        device.trusted = false
        device.stored = false
        unexport(device)
    }
}
