import AsyncPrimitives
import DBus

// Passive scanning through BlueZ's Advertisement Monitor API
// (org.bluez.AdvertisementMonitorManager1 on the adapter, our monitors
// exported as org.bluez.AdvertisementMonitor1 under one object manager per
// adapter). What bluetoothd 5.66 does, observed in the VM rig
// (docs/central.md, "Passive scanning"; scripts/bluez-vm-probe/probe-monitor.py):
// - the manager is on the adapter only when bluetoothd runs with -E;
//   SupportedMonitorTypes is ["or_patterns"];
// - RegisterMonitor(root) calls GetManagedObjects on the root before it
//   answers; a monitor it refuses (no or empty Patterns, a type other than
//   or_patterns, bad RSSI values, a pattern of 32 bytes or AD type 0) gets
//   Release, the others Activate after the reply; a monitor exported later
//   (InterfacesAdded) is activated, one removed (InterfacesRemoved) dropped;
// - DeviceFound(device) comes for each matching advertising report (the
//   Device1 object exists by then), again whenever a monitor is activated,
//   and with RSSI thresholds unset no DeviceLost ever comes: the device is
//   removed TemporaryTimeout (30 s) after it was last heard, as in discovery;
// - UnregisterMonitor releases every active monitor; a root registered twice
//   is AlreadyExists, an unknown one DoesNotExist.

extension Central {
    static let monitorInterfaceName: InterfaceName = "org.bluez.AdvertisementMonitor1"
    static let monitorManagerInterface: InterfaceName = "org.bluez.AdvertisementMonitorManager1"

    /// The object manager under which an adapter's monitors are exported
    /// (the root registered with that adapter's manager).
    static func monitorRoot(_ adapterPath: ObjectPath) -> ObjectPath {
        ObjectPath(unchecked: "/org/blegateway/monitor/" + adapterPath.lastElement)
    }

    /// Exports the session's monitor, registers the adapter's root if it is
    /// not yet, and waits for bluetoothd to activate the monitor. Without a
    /// monitor manager on the adapter the session falls back to `fallback`,
    /// or fails `.notSupported`.
    func startMonitor(
        _ id: UInt64, adapter: Adapter, patterns: [AdvertisementPattern], fallback: LowDutyDiscovery?,
        activation: Promise<Void, BlueZError>, deadline: ContinuousClock.Instant
    ) async throws(BlueZError) {
        let root = Self.monitorRoot(adapter.path)
        let path = ObjectPath(unchecked: root.rawValue + "/s\(id)")
        let objects = connection.objects
        objects.addObjectManager(at: root)
        do {
            try objects.add(monitorInterface(), at: path, properties: Self.monitorProperties(patterns))
        } catch {
            throw BlueZError.wrapping(error)
        }
        state.withLock { state in
            state.sessions[id]?.monitorPath = path
            state.sessions[id]?.monitorPatterns = patterns
        }
        do {
            try await reconcileDiscovery(adapter.path, deadline: deadline, strict: true)
        } catch where error.code == .notSupported {
            guard let fallback else { throw error }
            objects.remove(at: path)
            startLowDuty(id, adapterPath: adapter.path, fallback)
            return
        }
        try await activation.wait(
            deadline: deadline,
            timeout: BlueZError(.timeout, "bluetoothd did not activate the advertisement monitor in time"),
            cancelled: BlueZError(.cancelled, "the scan was cancelled")
        ).get()
    }

    /// Registers the adapter's monitor root while it has monitor sessions,
    /// and unregisters it when it has none. Called in the adapter's lane by
    /// `reconcileInLane`.
    func reconcileMonitor(
        _ adapterPath: ObjectPath, deadline: ContinuousClock.Instant, strict: Bool
    ) async throws(BlueZError) {
        let (wanted, registered, powered) = state.withLock { state in
            (
                !state.stopped
                    && state.sessions.values.contains { $0.adapterPath == adapterPath && $0.monitorPath != nil },
                state.scanning[adapterPath]?.monitorRegistered ?? false,
                state.tree.adapters[adapterPath]?.powered ?? false
            )
        }
        let root = Self.monitorRoot(adapterPath)
        if !wanted {
            guard registered else { return }
            state.withLock { $0.scanning[adapterPath]?.monitorRegistered = false }
            _ = try? await call(
                adapterPath, Self.monitorManagerInterface, "UnregisterMonitor", [.objectPath(root)], deadline: deadline)
            return
        }
        guard !registered, powered else { return }
        exportMonitorsAgain(on: adapterPath)
        do {
            _ = try await call(
                adapterPath, Self.monitorManagerInterface, "RegisterMonitor", [.objectPath(root)], deadline: deadline)
        } catch where error.code == .alreadyExists {
            // Still registered from before an adapter power cycle: bluetoothd
            // kept it, and our monitors with it.
        } catch where Self.isMissingManager(error) {
            let failure = BlueZError(
                .notSupported,
                "bluetoothd offers no advertisement monitor on \(adapterPath.lastElement) (passive scanning needs bluetoothd started with -E, --experimental)",
                dbusName: error.dbusName, dbusMessage: error.dbusMessage)
            if strict { throw failure }
            return
        } catch {
            if strict { throw error }
            return
        }
        state.withLock { state in
            state.scanning[adapterPath, default: ScanState()].monitorRegistered = true
            for (id, session) in state.sessions
            where session.adapterPath == adapterPath && session.monitorPath != nil && session.interrupted {
                session.continuation.yield(.resumed)
                state.sessions[id]?.interrupted = false
            }
        }
    }

    /// After the bus connection was replaced (`attach`) the monitors were
    /// exported on the old one: exported again before the root is
    /// registered, so that bluetoothd's GetManagedObjects finds them.
    private func exportMonitorsAgain(on adapterPath: ObjectPath) {
        let objects = connection.objects
        let monitors = state.withLock { state in
            state.sessions.values.compactMap { session -> (ObjectPath, [AdvertisementPattern])? in
                guard session.adapterPath == adapterPath, let path = session.monitorPath else { return nil }
                return (path, session.monitorPatterns)
            }
        }
        guard !monitors.isEmpty else { return }
        objects.addObjectManager(at: Self.monitorRoot(adapterPath))
        for (path, patterns) in monitors where !objects.contains(path) {
            try? objects.add(monitorInterface(), at: path, properties: Self.monitorProperties(patterns))
        }
    }

    /// bluetoothd without -E has no such interface on the adapter.
    static func isMissingManager(_ error: BlueZError) -> Bool {
        guard let name = error.dbusName else { return false }
        return name == "org.freedesktop.DBus.Error.UnknownMethod" || name == "org.freedesktop.DBus.Error.UnknownInterface"
            || name == "org.freedesktop.DBus.Error.UnknownObject"
    }

    static func monitorProperties(_ patterns: [AdvertisementPattern]) -> [String: Value] {
        [
            "Type": .string("or_patterns"),
            "Patterns": .array(
                .structure([.byte, .byte, .array(.byte)]),
                patterns.map { .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)]) }),
        ]
    }

    /// The session a monitor object belongs to (`…/s<id>`).
    private static func sessionID(of path: ObjectPath) -> UInt64? {
        let last = path.lastElement
        guard last.hasPrefix("s") else { return nil }
        return UInt64(last.dropFirst())
    }

    /// bluetoothd's calls on our monitors. RSSI thresholds are left unset:
    /// bluetoothd then reports every matching device and never loses one
    /// (a lost device is removed after TemporaryTimeout, `.lost`, or reported
    /// `.silent` by the session's presence timeout).
    private func monitorInterface() -> ExportedInterface {
        ExportedInterface(
            Self.monitorInterfaceName,
            methods: [
                .init("Activate") { [weak self] call in
                    guard let self, let id = Self.sessionID(of: call.path) else { return [] }
                    let activation = self.state.withLock { $0.sessions[id]?.activation }
                    activation?.resolve(.success(()))
                    return []
                },
                .init("Release") { [weak self] call in
                    guard let self, let id = Self.sessionID(of: call.path) else { return [] }
                    let activation = self.state.withLock { $0.sessions[id]?.activation }
                    // Before activation: bluetoothd refused the monitor.
                    activation?.resolve(
                        .failure(
                            BlueZError(
                                .invalidArguments,
                                "bluetoothd refused the advertisement monitor (its patterns or its values)")))
                    return []
                },
                .init("DeviceFound", inputs: [.init("device", .objectPath)]) { [weak self] call in
                    guard let self, let id = Self.sessionID(of: call.path),
                        let device = call.arguments.first?.objectPath
                    else { return [] }
                    self.update { state in
                        guard state.sessions[id]?.monitored != nil else { return }
                        state.sessions[id]?.monitored?.insert(device)
                        if let found = state.tree.devices[device] { state.sessions[id]?.offer(found) }
                    }
                    return []
                },
                .init("DeviceLost", inputs: [.init("device", .objectPath)]) { [weak self] call in
                    guard let self, let id = Self.sessionID(of: call.path),
                        let device = call.arguments.first?.objectPath
                    else { return [] }
                    self.update { state in
                        guard state.sessions[id]?.forget(device) == true, let lost = state.tree.devices[device] else {
                            state.sessions[id]?.monitored?.remove(device)
                            return
                        }
                        state.sessions[id]?.continuation.yield(.silent(lost))
                    }
                    return []
                },
            ],
            properties: [
                .init("Type", .string),
                .init("Patterns", .array(.structure([.byte, .byte, .array(.byte)]))),
            ])
    }

    /// Scans in windows: the session discovers for `plan.window` out of
    /// every `plan.period`, until it ends.
    func startLowDuty(_ id: UInt64, adapterPath: ObjectPath, _ plan: LowDutyDiscovery) {
        update { state in
            state.sessions[id]?.monitorPath = nil
            state.sessions[id]?.monitored = nil
            state.sessions[id]?.activation = nil
            // As an active session starts: the devices bluetoothd lists as
            // around at once (`isAround`).
            for device in state.tree.devices.values where device.path.parent == adapterPath && Self.isAround(device) {
                state.sessions[id]?.offer(device)
            }
        }
        Task { [weak self] in
            var open = true
            while true {
                guard let self, self.setDiscovers(id, open) else { return }
                try? await self.reconcileDiscovery(adapterPath)
                try? await Task.sleep(for: open ? plan.window : plan.period - plan.window)
                open.toggle()
            }
        }
    }

    /// Opens or closes a low-duty session's window; false once it ended.
    private func setDiscovers(_ id: UInt64, _ discovers: Bool) -> Bool {
        state.withLock { state in
            guard state.sessions[id] != nil else { return false }
            state.sessions[id]?.discovers = discovers
            return true
        }
    }

    /// The adapters whose monitor root is registered (for `stop()`).
    func registeredMonitorRoots(in state: CentralState) -> [ObjectPath] {
        state.scanning.filter { $0.value.monitorRegistered }.map(\.key)
    }
}
