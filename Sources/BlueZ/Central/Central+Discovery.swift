import AsyncPrimitives
import DBus

extension Central {
    /// Starts a discovery session on `adapter` (the first adapter when nil)
    /// and returns it once bluetoothd is scanning.
    ///
    /// Sessions share the adapter: bluetoothd scans while at least one
    /// exists, with a filter merged from all of them (`SetDiscoveryFilter`);
    /// each session sees only what matches its own filter. A session first
    /// gets the matching devices bluetoothd lists as around: those heard in
    /// the running scan, and those a scan heard within TemporaryTimeout (see
    /// `isAround`). It ends when its consumer stops iterating.
    ///
    /// Throws `.poweredOff`, `.adapterUnavailable`, `.timeout`, or what
    /// bluetoothd answered to StartDiscovery.
    ///
    /// `mode` `.passive` listens through an advertisement monitor instead
    /// (see `ScanMode`): the session reports the devices the monitor found
    /// (DeviceFound) and then their advertisements, and a device the
    /// monitor lost (DeviceLost) `.silent`. It also throws
    /// `.invalidArguments` (no pattern, a pattern bluetoothd refuses) and
    /// `.notSupported` (no monitor manager on the adapter, and no fallback).
    public func scan(
        adapter: String? = nil, filter: DiscoveryFilter = DiscoveryFilter(), mode: ScanMode = .active,
        bufferSize: Int = 1024, timeout: Duration? = nil
    ) async throws(BlueZError) -> DiscoverySession {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        var passive: (patterns: [AdvertisementPattern], fallback: LowDutyDiscovery?)?
        if case .passive(let patterns, let fallback) = mode {
            guard !patterns.isEmpty else {
                throw BlueZError(.invalidArguments, "a passive scan needs at least one advertisement pattern")
            }
            if let problem = patterns.lazy.compactMap(\.problem).first { throw BlueZError(.invalidArguments, problem) }
            passive = (patterns, fallback)
        }
        let adapterInfo = try adapterSnapshot(adapter)
        guard adapterInfo.powered else { throw BlueZError(.poweredOff, "\(adapterInfo.id) is powered off") }
        let (stream, continuation) = AsyncStream.makeStream(
            of: DiscoveryEvent.self, bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let activation = Promise<Void, BlueZError>()
        let id = state.withLock { state -> UInt64 in
            let id = state.makeID()
            var session = SessionRecord(adapterPath: adapterInfo.path, filter: filter, continuation: continuation)
            if passive != nil {
                session.discovers = false
                session.monitored = []
                session.activation = activation
            } else {
                for device in state.tree.devices.values
                where device.path.parent == adapterInfo.path && Self.isAround(device) {
                    session.offer(device)
                }
            }
            state.sessions[id] = session
            return id
        }
        // Off the terminating thread: see `Broadcast` (AsyncPrimitives).
        continuation.onTermination = { [weak self] _ in Task { self?.endSession(id) } }
        if let timeout = filter.presenceTimeout { watchPresence(of: id, timeout: timeout) }
        do {
            if let passive {
                try await startMonitor(
                    id, adapter: adapterInfo, patterns: passive.patterns, fallback: passive.fallback,
                    activation: activation, deadline: deadline)
            } else {
                try await reconcileDiscovery(adapterInfo.path, deadline: deadline, strict: true)
            }
        } catch {
            // Ended like any session, so that discovery this start may
            // have begun (the caller was cancelled while waiting for
            // bluetoothd) is stopped again if no other session wants it.
            endSession(id)
            continuation.finish()
            throw error
        }
        return DiscoverySession(adapter: adapterInfo.id, filter: filter, mode: mode, stream: stream)
    }

    /// Whether bluetoothd lists `device` because a scan heard it lately, so
    /// a new session reports it at once rather than waiting to hear it again:
    ///
    /// - it has an RSSI: heard in the running scan (bluetoothd invalidates
    ///   RSSI when discovery stops, src/adapter.c `discovery_cleanup`);
    /// - or it is temporary (neither paired, bonded, trusted, blocked nor
    ///   connected): bluetoothd keeps such a device only TemporaryTimeout
    ///   (30 s) after it was last heard, then removes it (`.lost`).
    ///
    /// Waiting to hear it again is not enough: in the VM rig btvirt sends one
    /// advertising report per scan start and the kernel can drop it, so a
    /// device found by one scan went unreported by the next for a whole scan
    /// cycle (10 s). Paired and trusted devices stay listed when out of
    /// range, so they are reported only once heard.
    static func isAround(_ device: Device) -> Bool {
        if device.advertisement.rssi != nil { return true }
        return !device.paired && !device.bonded && !device.trusted && !device.blocked && !device.connected
    }

    /// Reports the silent devices of a session with a presence timeout, a
    /// few times per timeout, until the session ends.
    private func watchPresence(of id: UInt64, timeout: Duration) {
        let period = min(max(timeout / 4, .milliseconds(50)), .seconds(1))
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: period)
                guard let self else { return }
                let running = self.state.withLock { state -> Bool in
                    guard state.sessions[id] != nil else { return false }
                    let tree = state.tree
                    state.sessions[id]?.sweepSilent(in: tree)
                    return true
                }
                guard running else { return }
            }
        }
    }

    /// Scans for `duration` and returns the devices found that match
    /// `filter`, in order of discovery.
    public func discover(
        adapter: String? = nil, filter: DiscoveryFilter = DiscoveryFilter(), mode: ScanMode = .active,
        duration: Duration
    ) async throws(BlueZError) -> [Device] {
        let session = try await scan(adapter: adapter, filter: filter, mode: mode)
        let collector = Task {
            var found: [Device] = []
            var index: [ObjectPath: Int] = [:]
            for await event in session {
                switch event {
                case .discovered(let device), .updated(let device):
                    if let at = index[device.path] {
                        found[at] = device
                    } else {
                        index[device.path] = found.count
                        found.append(device)
                    }
                default: break
                }
            }
            return found
        }
        try? await Task.sleep(for: duration)
        collector.cancel()
        return await collector.value
    }

    func endSession(_ id: UInt64) {
        guard let record = state.withLock({ $0.sessions.removeValue(forKey: id) }) else { return }
        // bluetoothd drops a monitor whose object goes (InterfacesRemoved).
        if let monitorPath = record.monitorPath { connection.objects.remove(at: monitorPath) }
        record.activation?.resolve(.failure(BlueZError(.cancelled, "the scan ended")))
        Task { try? await self.reconcileDiscovery(record.adapterPath) }
    }

    /// Brings bluetoothd's discovery on an adapter in line with the sessions:
    /// stopped without sessions; with them, the merged filter set and
    /// discovery started. Runs in the adapter's lane, reading the sessions
    /// when it runs, so queued calls converge on the latest state.
    ///
    /// `strict`: throw when the adapter is off (for a session starting);
    /// otherwise a background call quietly does nothing.
    func reconcileDiscovery(
        _ adapterPath: ObjectPath, deadline: ContinuousClock.Instant? = nil, strict: Bool = false
    ) async throws(BlueZError) {
        let deadline = deadline ?? ContinuousClock.now + options.defaultTimeout
        do {
            try await lanes.run(adapterPath, deadline: deadline) { () async throws in
                try await self.reconcileInLane(adapterPath, deadline: deadline, strict: strict)
            }
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    private func reconcileInLane(
        _ adapterPath: ObjectPath, deadline: ContinuousClock.Instant, strict: Bool
    ) async throws(BlueZError) {
        // bluetoothd 5.66 applies a new filter to a running scan by stopping
        // and restarting it (src/adapter.c `update_discovery_filter`). A
        // StopDiscovery that arrives meanwhile sends a second stop, which the
        // kernel rejects; bluetoothd then answers InProgress, drops this
        // client and never announces Discovering false
        // (`stop_discovery_complete`). Seen in the e2e suite when two scan
        // streams closed together: the first close narrowed the filter, the
        // second stopped 0 ms later. So the next call waits the restart out.
        if let settles = state.withLock({ $0.scanning[adapterPath]?.restartSettles }), settles > .now {
            try? await Task.sleep(until: min(settles, deadline), clock: .continuous)
        }
        try await reconcileMonitor(adapterPath, deadline: deadline, strict: strict)
        let (filters, current, powered, stopped) = state.withLock { state in
            (
                state.sessions.values.filter { $0.adapterPath == adapterPath && $0.discovers }.map(\.filter),
                state.scanning[adapterPath] ?? ScanState(),
                state.tree.adapters[adapterPath]?.powered ?? false,
                state.stopped
            )
        }
        if filters.isEmpty || stopped {
            guard current.running else { return }
            state.withLock { $0.scanning[adapterPath] = nil }
            do {
                _ = try await call(adapterPath, Adapter1.interface, "StopDiscovery", deadline: deadline)
            } catch where error.dbusMessage == "No discovery started" {
                // bluetoothd already forgot us (powered off, restarted).
            } catch where error.code == .inProgress {
                // The stop raced a scan restart (see above): bluetoothd has
                // dropped this client all the same.
            } catch {
                throw BlueZError.wrapping(error)
            }
            return
        }
        guard powered else {
            if strict { throw BlueZError(.poweredOff, "\(adapterPath.lastElement) is powered off") }
            return
        }
        let desired = MergedDiscoveryFilter(merging: filters)
        if current.applied != desired {
            _ = try await call(
                adapterPath, Adapter1.interface, "SetDiscoveryFilter", [Adapter1.filterArgument(desired)],
                deadline: deadline)
            let settles = current.running ? ContinuousClock.now + options.discoveryRestartSettle : nil
            state.withLock { state in
                state.scanning[adapterPath, default: ScanState()].applied = desired
                state.scanning[adapterPath, default: ScanState()].restartSettles = settles
            }
        }
        if !current.running {
            // Recorded before the call: if the reply never comes in time or
            // the caller stops waiting for it (cancelled), bluetoothd may
            // still start, and the next reconcile must know to stop it. A
            // stop it did not need is answered "No discovery started".
            state.withLock { $0.scanning[adapterPath, default: ScanState()].running = true }
            do {
                _ = try await call(adapterPath, Adapter1.interface, "StartDiscovery", deadline: deadline)
            } catch where error.code == .inProgress {
                // bluetoothd still counts this client as discovering (the
                // mirror was rebuilt without a restart): that is the goal.
            } catch where error.code == .cancelled || error.code == .timeout {
                throw error
            } catch {
                state.withLock { $0.scanning[adapterPath]?.running = false }
                throw BlueZError.wrapping(error)
            }
            state.withLock { state in
                for (id, session) in state.sessions
                where session.adapterPath == adapterPath && session.interrupted && session.discovers {
                    session.continuation.yield(.resumed)
                    state.sessions[id]?.interrupted = false
                }
            }
        }
    }
}
