import AsyncPrimitives
import DBus
import Synchronization

/// Keeps devices connected, with nobody asking: connects whenever a kept
/// device can be reached and, after every loss (link loss, the device out
/// of range, bluetoothd restarting, the bus lost, the adapter powered off),
/// tries again with backoff until it is connected again. While BlueZ is
/// unreachable or the adapter is off it waits for them instead, without
/// counting attempts. Each step is an `Event`; it gives up only when told
/// to (`maxAttempts`).
///
/// A connection attempt is `Central.connect`, which also finds a device
/// bluetoothd does not list (out of range since bluetoothd started), so an
/// attempt waits up to `Policy.connectTimeout` for the device to be heard.
/// Kept devices are left connected when the central stops (see
/// `Central.leaveConnectedOnStop`), for the next start to keep.
public final class ConnectionKeeper: Sendable {
    /// How hard the keeper tries.
    public struct Policy: Sendable {
        /// How long one attempt may look for the device and connect.
        public var connectTimeout: Duration = .seconds(20)
        /// The pause before the second attempt; it doubles after each
        /// failure, up to `maximumDelay`.
        public var initialDelay: Duration = .milliseconds(500)
        public var maximumDelay: Duration = .seconds(10)

        public init() {}

        /// The pause before attempt `attempt` (none before the first).
        func delay(before attempt: Int) -> Duration {
            guard attempt > 1 else { return .zero }
            var delay = initialDelay
            for _ in 2..<min(attempt, 32) where delay < maximumDelay { delay *= 2 }
            return min(delay, maximumDelay)
        }

        /// Whether attempt `attempt` is worth announcing: the first, each
        /// one whose pause grew, and then every power of two, so that a
        /// device that stays away adds announcements ever more rarely
        /// (its `failedAttempts` counts every one).
        func announces(attempt: Int) -> Bool {
            attempt <= 1 || delay(before: attempt) > delay(before: attempt - 1) || attempt & (attempt - 1) == 0
        }
    }

    /// A step of keeping a device connected.
    public enum Event: Sendable, Hashable {
        /// Attempt `attempt` to (re)connect starts after `delay`, because of
        /// `reason` (`kept` for the first, else why the link was lost or
        /// the previous attempt failed: a BlueZ error code or disconnect
        /// reason). Every attempt is an event; `announces` says which are
        /// worth passing on to people.
        case reconnecting(adapter: String, address: BluetoothAddress, attempt: Int, reason: String, delay: Duration)
        /// The device is connected (after `attempts` attempts; 0 when it
        /// was connected already).
        case connected(adapter: String, address: BluetoothAddress, attempts: Int)
        /// The keeper stopped trying after `attempts` failed attempts (only
        /// with `maxAttempts`); the device stays listed as given up until it
        /// is kept again (which starts over) or released.
        case givenUp(adapter: String, address: BluetoothAddress, attempts: Int, reason: String)
    }

    /// A kept device and how keeping it goes.
    public struct KeptDevice: Sendable, Hashable {
        public enum Status: String, Sendable, Hashable {
            case connected, connecting
            case givenUp = "given-up"
        }

        /// The adapter it is kept on (its identity, and where it is stored).
        public var adapter: String
        public var address: BluetoothAddress
        /// The adapter it is connected, or being connected, through:
        /// `adapter` while that adapter is present; after it went away
        /// (unplugged), the adapter that heard the device best.
        public var via: String
        /// Give up after this many failed attempts in a row; nil: never.
        public var maxAttempts: Int?
        public var status: Status
        /// Failed attempts since the device was last connected.
        public var failedAttempts: Int
        /// Why the last attempt failed or the link was lost, if it did.
        public var lastReason: String?
        /// The client's own name for this keeping (opaque to the keeper).
        public var label: String?
    }

    private struct Entry {
        var device: KeptDevice
        var task: Task<Void, Never>?
        /// The device as bluetoothd last listed it while kept.
        var snapshot: Device?
    }

    private struct State {
        var entries: [AdapterDevice: Entry] = [:]
        var stopped = false
    }

    public let central: Central
    public let policy: Policy
    private let state = Mutex(State())
    private let broadcast = Broadcast<Event>()

    public init(central: Central, policy: Policy = Policy()) {
        self.central = central
        self.policy = policy
    }

    /// Whether `event` is worth passing on to people (an event log, a
    /// broker): every event but the `reconnecting` attempts of a device
    /// that stays away, which are announced ever more rarely (see
    /// `Policy.announces`), so that it cannot flood them.
    public func announces(_ event: Event) -> Bool {
        guard case .reconnecting(_, _, let attempt, _, _) = event else { return true }
        return policy.announces(attempt: attempt)
    }

    /// The keeper's events from now on.
    public func events(bufferSize: Int = 1024) -> AsyncStream<Event> {
        broadcast.subscribe(bufferSize: bufferSize)
    }

    /// Starts keeping the device connected (or changes its `maxAttempts`
    /// and `label`). True if it was not kept before.
    @discardableResult
    public func keep(_ address: BluetoothAddress, adapter: String, maxAttempts: Int? = nil, label: String? = nil) -> Bool {
        let key = AdapterDevice(adapter: adapter, address: address)
        central.leaveConnectedOnStop(address, adapter: adapter, true)
        let (isNew, start) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            if var entry = state.entries[key] {
                entry.device.maxAttempts = maxAttempts
                entry.device.label = label
                let restart = entry.device.status == .givenUp
                if restart {
                    entry.device.status = .connecting
                    entry.device.failedAttempts = 0
                }
                state.entries[key] = entry
                return (false, restart)
            }
            state.entries[key] = Entry(
                device: KeptDevice(
                    adapter: adapter, address: address, via: adapter, maxAttempts: maxAttempts, status: .connecting,
                    failedAttempts: 0, lastReason: nil, label: label))
            return (true, true)
        }
        if start {
            let task = Task { [self] in await run(key) }
            state.withLock { $0.entries[key]?.task = task }
        }
        return isNew
    }

    /// Stops keeping the device (leaving its connection as it is). True if
    /// it was kept.
    @discardableResult
    public func release(_ address: BluetoothAddress, adapter: String) -> Bool {
        central.leaveConnectedOnStop(address, adapter: adapter, false)
        let entry = state.withLock { $0.entries.removeValue(forKey: AdapterDevice(adapter: adapter, address: address)) }
        if let via = entry?.device.via, via != adapter { central.leaveConnectedOnStop(address, adapter: via, false) }
        entry?.task?.cancel()
        return entry != nil
    }

    /// The kept devices, by adapter and address.
    public func keptDevices() -> [KeptDevice] {
        state.withLock { $0.entries.values.map(\.device) }.sorted {
            ($0.adapter, $0.address.description) < ($1.adapter, $1.address.description)
        }
    }

    /// A kept device, if it is kept.
    public func keptDevice(_ address: BluetoothAddress, adapter: String) -> KeptDevice? {
        state.withLock { $0.entries[AdapterDevice(adapter: adapter, address: address)]?.device }
    }

    /// A kept device as bluetoothd last listed it, disconnected, or (never
    /// listed since it was kept) with nothing but its address: what the
    /// gateway knows of it while bluetoothd does not list it (restarting,
    /// or the device out of range). Nil if the device is not kept.
    public func lastKnown(_ address: BluetoothAddress, adapter: String) -> Device? {
        guard let entry = state.withLock({ $0.entries[AdapterDevice(adapter: adapter, address: address)] }) else { return nil }
        var device =
            entry.snapshot
            ?? Device(
                path: ObjectPath(unchecked: "/org/bluez/\(adapter)/\(address.objectPathElement)"), adapter: adapter,
                address: address)
        device.connected = false
        device.servicesResolved = false
        device.mtu = nil
        return device
    }

    /// Stops every keeping task, leaving the connections as they are (for
    /// the next start to keep), and ends the event streams.
    public func stop() {
        let tasks = state.withLock { state in
            state.stopped = true
            return state.entries.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
        broadcast.finish()
    }

    private func emit(_ event: Event) {
        broadcast.yield(event)
    }

    private func update(_ key: AdapterDevice, _ change: (inout KeptDevice) -> Void) {
        state.withLock { state in
            if var entry = state.entries[key] {
                change(&entry.device)
                state.entries[key] = entry
            }
        }
    }

    private func isConnected(_ address: BluetoothAddress, adapter: String, key: AdapterDevice) -> Bool {
        guard let device = try? central.device(address, adapter: adapter) else { return false }
        state.withLock { $0.entries[key]?.snapshot = device }
        return device.connected
    }

    /// Keeps one device connected until cancelled or given up.
    ///
    /// Through the adapter it is kept on while that adapter is present;
    /// when it goes away (a USB adapter unplugged: its object is removed,
    /// BlueZ still running), through the adapter that hears the device
    /// best and has a free slot (`Central.connect` with no adapter), where
    /// it stays until its link is lost again.
    private func run(_ key: AdapterDevice) async {
        let (address, adapter) = (key.address, key.adapter)
        // Followed from before the first attempt, so that a loss right
        // after a connect is not missed; through any adapter, since the
        // device may move.
        let events = central.events(.link(of: address, adapter: nil), bufferSize: 256)
        var changes = events.makeAsyncIterator()
        var failed = 0
        var reason = "kept"
        var announced = false
        var via = adapter
        // Released before this task was even recorded: nothing to keep.
        while !Task.isCancelled, state.withLock({ $0.entries[key] != nil }) {
            if isConnected(address, adapter: via, key: key) {
                if !announced {
                    announced = true
                    update(key) {
                        $0.status = .connected
                        $0.failedAttempts = 0
                    }
                    emit(.connected(adapter: adapter, address: address, attempts: failed))
                    failed = 0
                }
                guard let lost = await Self.nextLoss(of: address, adapter: via, in: &changes) else { return }
                if !isConnected(address, adapter: via, key: key) {
                    // BlueZ going away drops the adapter and the link first:
                    // its own reason says more.
                    let availability = central.availability
                    reason = availability == .available ? lost : availability.name
                    announced = false
                    update(key) {
                        $0.status = .connecting
                        $0.lastReason = reason
                    }
                }
                continue
            }
            if announced {
                // The link dropped after the look that found it still up
                // (the loss and the property change race): say so before
                // attempting, so that the kept device never reads
                // "connected" beside a failed attempt.
                update(key) { $0.status = .connecting }
            }
            announced = false
            // Nothing can connect while BlueZ is unreachable or the adapter
            // is off: wait for both rather than use up attempts (so that a
            // bluetoothd restart or a power cycle never gives a device up).
            let moved =
                central.availability == .available && central.adapterState(adapter) == .unavailable
                && central.adapters().contains(where: \.powered)
            if !moved, central.adapterState(adapter) != .poweredOn {
                let availability = central.availability
                let waitingFor = availability == .available ? "adapter-\(central.adapterState(adapter).rawValue)" : availability.name
                update(key) {
                    $0.status = .connecting
                    $0.lastReason = waitingFor
                }
                guard await Self.nextAdapterChange(in: &changes) else { return }
                continue
            }
            let maxAttempts = state.withLock { $0.entries[key]?.device.maxAttempts }
            if let maxAttempts, failed >= maxAttempts {
                update(key) { $0.status = .givenUp }
                state.withLock { $0.entries[key]?.task = nil }
                central.leaveConnectedOnStop(address, adapter: adapter, false)
                if via != adapter { central.leaveConnectedOnStop(address, adapter: via, false) }
                emit(.givenUp(adapter: adapter, address: address, attempts: failed, reason: reason))
                return
            }
            let delay = policy.delay(before: failed + 1)
            emit(.reconnecting(adapter: adapter, address: address, attempt: failed + 1, reason: reason, delay: delay))
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return }
            }
            do {
                let device = try await central.connect(
                    address, adapter: moved ? nil : adapter, timeout: policy.connectTimeout)
                via = device.adapter
                update(key) { $0.via = device.adapter }
                // Left connected at stop through whichever adapter holds it.
                if via != adapter { central.leaveConnectedOnStop(address, adapter: via, true) }
            } catch {
                if Task.isCancelled { return }
                // The adapter or BlueZ went away under the attempt: not the
                // device's failure; wait for them above. Powering off,
                // bluetoothd forgets the device (failing the attempt) before
                // it says so, so the mirror is caught up first.
                if !moved, await central.settledAdapterState(adapter) != .poweredOn { continue }
                failed += 1
                reason = error.code.rawValue
                update(key) {
                    $0.failedAttempts = failed
                    $0.lastReason = error.code.rawValue
                }
            }
        }
    }

    /// Waits for a change of an adapter's state (any: the kept one coming
    /// back, or another that could take the device when it does not) or of
    /// BlueZ's availability (the caller looks again: usable, or waiting for
    /// something else now); false when the central's events end or the
    /// task is cancelled.
    private static func nextAdapterChange(in changes: inout AsyncStream<CentralEvent>.Iterator) async -> Bool {
        while let event = await changes.next() {
            switch event {
            case .adapterState: return true
            case .availability: return true
            default: continue
            }
        }
        return false
    }

    /// Waits for an event that may mean the device lost its link, and
    /// says why; nil when the central's events end (it stopped) or the
    /// task is cancelled.
    private static func nextLoss(
        of address: BluetoothAddress, adapter: String, in changes: inout AsyncStream<CentralEvent>.Iterator
    ) async -> String? {
        while let event = await changes.next() {
            switch event {
            case .disconnected(let device, let reason) where device.address == address && device.adapter == adapter:
                return reason ?? "disconnected"
            case .deviceLost(let device) where device.address == address && device.adapter == adapter:
                return "device-removed"
            case .availability(let availability) where availability != .available:
                return availability.name
            case .adapterState(let id, let adapterState) where id == adapter && adapterState != .poweredOn:
                return "adapter-\(adapterState.rawValue)"
            default: continue
            }
        }
        return nil
    }
}
