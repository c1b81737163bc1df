import DBus

extension SimulatorCore {
    // MARK: Devices in the world

    /// The path a device of the scenario has (nil if its adapter is unknown).
    func devicePath(_ spec: Scenario.Device) -> ObjectPath? {
        guard let id = spec.adapter ?? adapterOrder.first ?? scenario.adapters.first?.id else { return nil }
        return ObjectPath(rawValue: "/org/bluez/\(id)/\(spec.address.pathComponent)")
    }

    /// Puts a peripheral in the world. A paired (bonded) device is on the
    /// bus at once, as bluetoothd loads bonds from storage; others appear
    /// when discovery sees them.
    /// A device heard by several adapters (`heardBy`) is one object per
    /// adapter, as bluetoothd keeps one per adapter for the same peer
    /// (org.bluez.Device.rst: `[variable prefix]/{hci0,hci1,...}/dev_XX_XX_XX_XX_XX_XX`);
    /// `only` places it under that adapter alone (the adapter came back).
    /// An adapter of `heardBy` that is absent (removed) is skipped.
    func addDevice(_ spec: Scenario.Device, only adapterID: String? = nil) throws {
        guard !spec.heardBy.isEmpty else {
            let placedUnder = devicePath(spec)?.parent.map { String($0.lastElement) }
            if adapterID == nil || placedUnder == adapterID {
                try place(spec)
            }
            return
        }
        for placed in spec.placements where adapterID == nil || placed.adapter == adapterID {
            guard let id = placed.adapter, adapters[id] != nil else { continue }
            try place(placed)
        }
    }

    private func place(_ spec: Scenario.Device) throws {
        guard let path = devicePath(spec), let adapterID = path.parent.map({ String($0.lastElement) }),
            let adapter = adapters[adapterID]
        else { throw DBusError(.invalidArgs, "no adapter for device \(spec.address)") }
        if let old = devices[path] { removeFromWorld(old) }
        let device = DeviceState(spec: spec, adapter: adapterID, path: path)
        devices[path] = device
        if spec.paired || spec.trusted { export(device) }
        if let range = spec.range { scheduleRange(device, leaveAfter: range.leaveAfter) }
        if adapter.isListening { scheduleAdvertising(device, adapter: adapter, now: .now) }
    }

    /// Takes a peripheral out of the world: a connection to it drops, and
    /// its object goes (as if it had gone far away and expired).
    func removeFromWorld(_ device: DeviceState) {
        if device.connected || device.connecting { dropConnection(device) }
        unexport(device)
        devices[device.path] = nil
    }

    // MARK: Advertising

    /// Discovery started on `adapter`: every device of it starts being heard.
    func scheduleAdvertisements(_ adapter: AdapterState) {
        let now = ContinuousClock.now
        for device in devices.values where device.adapter == adapter.spec.id {
            scheduleAdvertising(device, adapter: adapter, now: now, scanStart: true)
        }
    }

    /// The first report of a device comes at a random phase of its
    /// interval, as a scanner meets advertisers at random times; at the
    /// start of a discovery whose report is lost (`options.scanStartReport`),
    /// one whole interval later.
    func scheduleAdvertising(
        _ device: DeviceState, adapter: AdapterState, now: ContinuousClock.Instant, scanStart: Bool = false
    ) {
        device.advertisingGeneration &+= 1
        let interval = device.spec.advertising.interval
        let phase =
            scanStart && !hearsScanStart()
            ? interval : Double(random.next() % 1000) / 1000 * min(interval, 1)
        timers.schedule(.advertise(device.path, generation: device.advertisingGeneration), at: now + .seconds(phase))
    }

    /// Whether this discovery start's report of a device gets through.
    /// `.always` draws nothing, so seeded runs stay as they were.
    private func hearsScanStart() -> Bool {
        switch options.scanStartReport {
        case .always: return true
        case .never: return false
        case .sometimes(let probability): return Double(random.next() % 1_000_000) / 1_000_000 < probability
        }
    }

    func advertise(_ path: ObjectPath, generation: UInt64, due: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        guard let device = devices[path], device.advertisingGeneration == generation,
            let adapter = adapter(of: device), adapter.isListening
        else { return }
        // The next report: keep the cadence, but do not try to catch up
        // with reports missed while the clock was late.
        let interval = Duration.seconds(device.spec.advertising.interval)
        timers.schedule(.advertise(path, generation: generation), at: max(due + interval, now))
        // A connected LE peripheral usually stops advertising, and one out
        // of range is not heard.
        guard device.inRange, !device.connected, !device.blocked else { return }
        device.advertisements &+= 1
        counters.advertisingReports += 1
        let jitter = device.spec.rssiJitter
        let noise = jitter > 0 ? Int16(Int(random.next() % UInt64(2 * jitter + 1)) - Int(jitter)) : 0
        let report = device.report(jitter: noise)
        // Without a discovery only what a monitor's patterns match is
        // reported (bluetoothd drops the rest of a passive scan's reports).
        let matching = matchingMonitors(device, adapter: adapter)
        guard (adapter.isDiscovering && adapter.accepts(report)) || !matching.isEmpty else { return }
        received(report, from: device, adapter: adapter)
        monitorsHeard(device, adapter: adapter, matching: matching)
    }

    /// bluetoothd's `btd_adapter_update_found_device`: create the device
    /// object, or update RSSI (only changes of 8 dBm or more, unless a
    /// filter is set), ManufacturerData and ServiceData (only when they
    /// change, unless DuplicateData), in one PropertiesChanged as gdbus
    /// coalesces a report's changes.
    func received(_ report: AdvertisingReport, from device: DeviceState, adapter: AdapterState) {
        seen(device)
        let manufacturerData = device.manufacturerData
        guard device.exported else {
            device.reportedRSSI = report.rssi
            device.reportedManufacturerData = manufacturerData
            device.reportedServiceData = device.spec.advertising.serviceData
            export(device)
            return
        }
        var changes: [String: Value] = [:]
        let threshold: Int16 = adapter.isFilteredDiscovery ? 0 : 8
        if let old = device.reportedRSSI {
            if abs(Int(old) - Int(report.rssi)) >= Int(max(threshold, 1)) || (threshold == 0 && old != report.rssi) {
                changes["RSSI"] = .int16(report.rssi)
            }
        } else {
            changes["RSSI"] = .int16(report.rssi)
            if let txPower = device.spec.txPower { changes["TxPower"] = .int16(txPower) }
        }
        if changes["RSSI"] != nil { device.reportedRSSI = report.rssi }
        let duplicates = adapter.reportsDuplicates
        if !manufacturerData.isEmpty && (duplicates || manufacturerData != device.reportedManufacturerData) {
            changes["ManufacturerData"] = Interfaces.manufacturerData(manufacturerData)
            device.reportedManufacturerData = manufacturerData
        }
        let serviceData = device.spec.advertising.serviceData
        if !serviceData.isEmpty && (duplicates || serviceData != device.reportedServiceData) {
            changes["ServiceData"] = Interfaces.serviceData(serviceData)
            device.reportedServiceData = serviceData
        }
        guard !changes.isEmpty else { return }
        try? bus.objects.update(changes, of: "org.bluez.Device1", at: device.path)
    }

    /// Restarts the TemporaryTimeout of a device seen now
    /// (`device_update_last_seen`).
    func seen(_ device: DeviceState) {
        device.sightingGeneration &+= 1
        scheduleExpiry(device)
    }

    func scheduleExpiry(_ device: DeviceState) {
        let timeout = scaled(options.temporaryTimeout)
        timers.schedule(.expire(device.path, generation: device.sightingGeneration), at: .now + timeout)
    }

    /// `device_disappeared`: a temporary device not seen for
    /// TemporaryTimeout is removed.
    func expire(_ path: ObjectPath, generation: UInt64) {
        guard let device = devices[path], device.sightingGeneration == generation, device.exported,
            device.isTemporary
        else { return }
        unexport(device)
    }

    // MARK: Range

    func scheduleRange(_ device: DeviceState, leaveAfter: Double) {
        device.rangeGeneration &+= 1
        timers.schedule(.leaveRange(device.path, generation: device.rangeGeneration), at: .now + scaled(leaveAfter))
    }

    func leaveRange(_ path: ObjectPath, generation: UInt64) {
        guard let device = devices[path], device.rangeGeneration == generation else { return }
        setInRange(device, false)
        if let back = device.spec.range?.returnAfter {
            timers.schedule(.returnToRange(path, generation: generation), at: .now + scaled(back))
        }
    }

    func returnToRange(_ path: ObjectPath, generation: UInt64) {
        guard let device = devices[path], device.rangeGeneration == generation else { return }
        setInRange(device, true)
        if let range = device.spec.range { scheduleRange(device, leaveAfter: range.leaveAfter) }
    }

    /// A device leaving range stops advertising; a connection to it ends
    /// with a supervision timeout (Connected false, GATT objects gone).
    func setInRange(_ device: DeviceState, _ inRange: Bool) {
        device.inRange = inRange
        if !inRange, device.connected || device.connecting { dropConnection(device) }
    }
}
