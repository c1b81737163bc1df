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
        try bus.objects.add(
            [
                (interfaces.adapter, Interfaces.adapterProperties(adapter)), (interfaces.gattManager, [:]),
                (interfaces.advertisingManager, Interfaces.advertisingManagerProperties),
            ], at: path)
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
    /// the adapter (the server then stores and announces `Powered`).
    func setPowered(_ path: ObjectPath, _ powered: Bool) throws(DBusError) {
        let adapter = try adapter(at: path)
        guard adapter.powered != powered else { return }
        adapter.powered = powered
        guard !powered else { return }
        for device in devices.values where device.adapter == adapter.spec.id && (device.connected || device.connecting) {
            dropConnection(device)
        }
        if adapter.isDiscovering {
            adapter.discoveryClients.removeAll()
            adapter.filters.removeAll()
            discoveryStopped(adapter)
        }
        // bluetoothd forgets the devices it only discovered (seen in the VM
        // rig: the object is gone right after Powered turns false).
        for device in devices.values where device.adapter == adapter.spec.id && device.exported && device.isTemporary {
            unexport(device)
        }
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
        if !adapter.isDiscovering { discoveryStopped(adapter) }
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
        adapter.filters[client] = dictionary.isEmpty ? nil : filter
    }

    /// The last discovery session ended: bluetoothd invalidates the RSSI of
    /// the devices it found (PropertiesChanged with `RSSI` invalidated,
    /// before `Discovering` turns false), and the devices it will forget
    /// start their TemporaryTimeout from their last sighting.
    func discoveryStopped(_ adapter: AdapterState) {
        for device in devices.values where device.adapter == adapter.spec.id {
            device.advertisingGeneration &+= 1
            guard device.exported, device.reportedRSSI != nil else { continue }
            device.reportedRSSI = nil
            var invalidated = ["RSSI"]
            if device.spec.txPower != nil { invalidated.append("TxPower") }
            try? bus.objects.update([:], of: "org.bluez.Device1", at: device.path, invalidating: invalidated)
        }
        try? bus.objects.update(["Discovering": .boolean(false)], of: "org.bluez.Adapter1", at: adapter.path)
    }

    /// `remove_device`: DoesNotExist for a path that is not one of the
    /// adapter's devices; a connected device is disconnected first.
    func removeDevice(adapter path: ObjectPath, _ devicePath: ObjectPath) throws(DBusError) {
        let adapter = try adapter(at: path)
        guard let device = devices[devicePath], device.adapter == adapter.spec.id, device.exported else {
            throw BluetoothdError.doesNotExist
        }
        if device.connected || device.connecting { dropConnection(device) }
        device.paired = false
        device.trusted = false
        unexport(device)
    }
}
