import DBus

// AdvertisementMonitorManager1 as bluetoothd 5.66 serves it with -E, after
// what the VM rig showed (scripts/bluez-vm-probe/probe-monitor.py,
// docs/simulator.md "Advertisement monitors"):
// - RegisterMonitor reads the application with GetManagedObjects before it
//   answers; a monitor it refuses gets Release (before the reply), the
//   others Activate (after it); a root registered twice by the same client
//   is AlreadyExists; a root that exports nothing is accepted;
// - monitors exported later are activated, monitors removed are dropped
//   without a call;
// - while a monitor is active the adapter scans passively: every report of
//   a device whose advertisement matches a pattern updates the device (it
//   is created if need be, as discovery does) and calls DeviceFound on each
//   matching monitor; non-matching devices are not reported unless a
//   discovery runs. RSSI thresholds are checked but not applied (the
//   gateway leaves them unset, so DeviceLost never comes);
// - UnregisterMonitor releases every active monitor, then answers; an
//   unknown root is DoesNotExist; a client leaving the bus loses its
//   monitors without a call.

extension SimulatorCore {
    static let monitorInterface: InterfaceName = "org.bluez.AdvertisementMonitor1"

    func registerMonitor(adapter path: ObjectPath, _ root: ObjectPath, sender: BusName?) async throws(DBusError) {
        let adapter = try adapter(at: path)
        let key = MonitorRegistry.Key(owner: sender ?? BusName(unchecked: ":0.0"), root: root)
        guard monitors.applications[key] == nil else { throw BluetoothdError.alreadyExists }
        monitors.applications[key] = MonitorRegistry.Application(adapter: adapter.spec.id)
        let objects: [Value]
        do {
            objects = try await bus.call(
                destination: key.owner, path: root, interface: Self.objectManager, method: "GetManagedObjects",
                timeout: .seconds(10))
        } catch {
            // bluetoothd's GDBusClient simply sees no monitor.
            objects = []
        }
        guard monitors.applications[key] != nil else { return }
        var accepted: [(ObjectPath, [MonitorRegistry.Pattern])] = []
        for entry in objects.first?.dictionaryEntries ?? [] {
            guard let monitorPath = entry.key.objectPath,
                let properties = entry.value.dictionaryEntries?.first(where: {
                    $0.key.string == Self.monitorInterface.rawValue
                })?.value.vardict
            else { continue }
            if let patterns = MonitorRegistry.parse(properties) {
                accepted.append((monitorPath, patterns))
            } else {
                notifyMonitor(key.owner, monitorPath, "Release")
            }
        }
        watchMonitorApplication(key)
        // Activated after the reply, as bluetoothd does: the reply leaves
        // when this method returns, which a task of the actor cannot wait
        // for; a few milliseconds put the calls behind it.
        Task {
            try? await Task.sleep(for: .milliseconds(5))
            self.activate(accepted, of: key)
        }
    }

    private func activate(_ accepted: [(ObjectPath, [MonitorRegistry.Pattern])], of key: MonitorRegistry.Key) {
        for (path, patterns) in accepted {
            guard monitors.applications[key] != nil else { return }
            monitors.applications[key]?.monitors[path] = patterns
            notifyMonitor(key.owner, path, "Activate")
        }
        if let id = monitors.applications[key]?.adapter, let adapter = adapters[id] { monitoringChanged(adapter) }
    }

    func unregisterMonitor(adapter path: ObjectPath, _ root: ObjectPath, sender: BusName?) throws(DBusError) {
        let adapter = try adapter(at: path)
        let key = MonitorRegistry.Key(owner: sender ?? BusName(unchecked: ":0.0"), root: root)
        guard let application = monitors.applications.removeValue(forKey: key) else {
            throw BluetoothdError.doesNotExist
        }
        application.watch?.cancel()
        for monitor in application.monitors.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            notifyMonitor(key.owner, monitor, "Release")
        }
        monitoringChanged(adapter)
    }

    /// A client left the bus: its monitors go, without a call.
    func monitorClientLeft(_ client: BusName) {
        for (key, application) in monitors.applications where key.owner == client {
            application.watch?.cancel()
            monitors.applications[key] = nil
            if let adapter = adapters[application.adapter] { monitoringChanged(adapter) }
        }
    }

    /// Monitors exported or removed after the registration.
    private func watchMonitorApplication(_ key: MonitorRegistry.Key) {
        let bus = self.bus
        let task = Task { [weak self] in
            guard
                let stream = try? await bus.signals(
                    matching: MatchRule(sender: key.owner, interface: Self.objectManager, path: key.root))
            else { return }
            do {
                for try await signal in stream {
                    guard let path = signal.body.first?.objectPath else { continue }
                    switch signal.member?.rawValue {
                    case "InterfacesAdded":
                        let properties = signal.body.count > 1
                            ? signal.body[1].dictionaryEntries?.first(where: {
                                $0.key.string == Self.monitorInterface.rawValue
                            })?.value.vardict : nil
                        guard let properties else { continue }
                        await self?.monitorAdded(key, path, properties)
                    case "InterfacesRemoved":
                        guard signal.body.count > 1, signal.body[1].strings?.contains(Self.monitorInterface.rawValue) == true
                        else { continue }
                        await self?.monitorRemoved(key, path)
                    default: continue
                    }
                }
            } catch {
                // The connection closed.
            }
        }
        monitors.applications[key]?.watch = task
    }

    private func monitorAdded(_ key: MonitorRegistry.Key, _ path: ObjectPath, _ properties: [String: Value]) {
        guard monitors.applications[key] != nil else { return }
        guard let patterns = MonitorRegistry.parse(properties) else {
            notifyMonitor(key.owner, path, "Release")
            return
        }
        monitors.applications[key]?.monitors[path] = patterns
        notifyMonitor(key.owner, path, "Activate")
        if let id = monitors.applications[key]?.adapter, let adapter = adapters[id] { monitoringChanged(adapter) }
    }

    private func monitorRemoved(_ key: MonitorRegistry.Key, _ path: ObjectPath) {
        guard monitors.applications[key]?.monitors.removeValue(forKey: path) != nil else { return }
        if let id = monitors.applications[key]?.adapter, let adapter = adapters[id] { monitoringChanged(adapter) }
    }

    /// The passive scan starts with the first active monitor of an adapter
    /// (devices are heard from a new scan start, as when discovery starts)
    /// and stops with the last one, unless a discovery runs.
    func monitoringChanged(_ adapter: AdapterState) {
        let listening = monitors.activeMonitors(on: adapter.spec.id) > 0
        guard listening != adapter.passiveScanning else { return }
        adapter.passiveScanning = listening
        guard !adapter.isDiscovering else { return }
        if listening {
            if adapter.powered { scheduleAdvertisements(adapter) }
        } else {
            for device in devices.values where device.adapter == adapter.spec.id { device.advertisingGeneration &+= 1 }
        }
    }

    /// DeviceFound on every monitor of the adapter that matches the report.
    func monitorsHeard(_ device: DeviceState, adapter: AdapterState, matching: [(MonitorRegistry.Key, ObjectPath)]) {
        for (key, monitor) in matching {
            notifyMonitor(key.owner, monitor, "DeviceFound", [.objectPath(device.path)])
        }
    }

    /// The monitors whose patterns match the device's advertisement now.
    func matchingMonitors(_ device: DeviceState, adapter: AdapterState) -> [(MonitorRegistry.Key, ObjectPath)] {
        guard adapter.passiveScanning else { return [] }
        return monitors.matching(device.advertisingStructures, on: adapter.spec.id)
    }

    /// A `[noreply]` call to a monitor, in order with the others.
    private func notifyMonitor(_ owner: BusName, _ path: ObjectPath, _ method: MemberName, _ arguments: [Value] = []) {
        var message = Message.methodCall(
            destination: owner, path: path, interface: Self.monitorInterface, member: method, body: arguments)
        message.noReplyExpected = true
        try? bus.send(message)
    }
}

extension DeviceState {
    /// The AD structures the device advertises, (type, data), as a
    /// monitor's patterns see them. The simulator sends all of them in the
    /// advertising PDU (no scan response: a real device may put its name
    /// there, which a passive scan never hears).
    var advertisingStructures: [(UInt8, [UInt8])] {
        let advertising = spec.advertising
        var structures: [(UInt8, [UInt8])] = [(0x01, advertising.flags)]
        let short = advertising.uuids.compactMap(\.short)
        if !short.isEmpty { structures.append((0x03, short.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] })) }
        let long = advertising.uuids.filter { $0.short == nil }.flatMap(\.littleEndianBytes)
        if !long.isEmpty { structures.append((0x07, long)) }
        if let name = spec.name { structures.append((0x09, Array(name.utf8))) }
        if let txPower = spec.txPower { structures.append((0x0a, [UInt8(bitPattern: Int8(clamping: txPower))])) }
        for (company, data) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            structures.append((0xff, [UInt8(company & 0xff), UInt8(company >> 8)] + data))
        }
        for (uuid, data) in advertising.serviceData.sorted(by: { $0.key.string < $1.key.string }) {
            if let short = uuid.short {
                structures.append((0x16, [UInt8(short & 0xff), UInt8(short >> 8)] + data))
            } else {
                structures.append((0x21, uuid.littleEndianBytes + data))
            }
        }
        for (type, data) in advertising.data.sorted(by: { $0.key < $1.key }) { structures.append((type, data)) }
        return structures
    }
}

extension GATTUUID {
    /// The 16 bytes, least significant first, as advertising data carries a
    /// 128-bit UUID.
    var littleEndianBytes: [UInt8] {
        let digits = Array(string.filter { $0 != "-" }.utf8)
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count - 1, by: 2) {
            let text = String(decoding: digits[index...index + 1], as: UTF8.self)
            bytes.append(UInt8(text, radix: 16) ?? 0)
        }
        return bytes.reversed()
    }
}
