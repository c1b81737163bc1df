import AsyncPrimitives
import DBus
import Synchronization

/// The central role of BlueZ as a Swift API: adapters, discovery sessions,
/// connections, GATT operations and notification subscriptions, mirrored
/// from bluetoothd over D-Bus and shared safely by many callers at once.
///
/// ```swift
/// let central = Central(connection: bus)
/// try await central.start()
/// for await event in try await central.scan(filter: DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x180d)])) {
///     if case .discovered(let device) = event { print(device.address); break }
/// }
/// try await central.connect(address)
/// let value = try await central.read(.uuid(BluetoothUUID(uuid16: 0x2a38)), of: address)
/// ```
///
/// Guarantees (docs/central.md has the details):
/// - Snapshots (`adapters()`, `devices(...)`, `services(of:)`) come from a
///   local mirror of bluetoothd's objects: no D-Bus traffic.
/// - Connect, disconnect and removal of one device run one at a time in
///   arrival order; GATT operations wait for them, and for nothing else
///   but an operation of the same kind on the same attribute. Concurrent
///   reads of one value share one `ReadValue`.
/// - Discovery and notifications are reference-counted across consumers.
/// - When bluetoothd restarts, or the bus connection is replaced after the
///   bus dropped it (`attach`), the mirror is rebuilt and discovery and
///   notification subscriptions are re-established, or ended with a reason.
public final class Central: Sendable {
    /// The bus connection in use; the caller owns it (and closes it after
    /// `stop()`).
    public var connection: Connection { bus.withLock { $0 } }
    public let options: Options
    private let bus: Mutex<Connection>

    let state = Mutex(CentralState())
    /// The streams of `events()`.
    let eventBroadcast = CentralEventBroadcast()
    /// Operations per device path, and discovery changes per adapter path.
    let lanes = OperationLanes<LaneKey>()
    /// Reads in flight, shared by the callers that ask for the same value.
    let reads = SingleFlight<ReadKey, [UInt8]>()
    /// The handlers of bluetoothd's signals and of its name changing hands.
    let subscriptions = Mutex<[SignalSubscription]>([])

    /// Tunables, with defaults fit for a gateway.
    public struct Options: Sendable {
        /// Timeout of operations when the caller gives none.
        public var defaultTimeout: Duration = .seconds(30)
        /// How many times a connection attempt that failed transiently
        /// (`le-connection-abort-by-local`) is tried again.
        public var connectRetries = 2
        /// The pause before trying again.
        public var connectRetryDelay: Duration = .milliseconds(250)
        /// The time `GetManagedObjects` may take.
        public var rebuildTimeout: Duration = .seconds(10)
        /// How long `disconnect` waits for bluetoothd to report the link
        /// down after `Disconnect()` returned (it reports it later).
        public var disconnectSettleTimeout: Duration = .seconds(3)
        /// How long discovery calls wait after a `SetDiscoveryFilter` that
        /// made bluetoothd restart a running scan (see `reconcileInLane`).
        public var discoveryRestartSettle: Duration = .milliseconds(500)
        /// How notifications are asked of BlueZ (AcquireNotify where
        /// offered, or StartNotify always).
        public var notifyPath: NotifyPath = .acquire
        /// How many connections each adapter holds at once (BlueZ does not
        /// say; see `SlotLimits`). A connection past the limit waits for a
        /// slot until its deadline.
        public var slotLimits = SlotLimits()
        /// The adapters this central uses; the others are not mirrored.
        public var adapterScope = AdapterScope.all

        public init() {}
    }

    /// A central on `connection`; nothing happens until `start()`.
    public init(connection: Connection, options: Options = Options()) {
        self.bus = Mutex(connection)
        self.options = options
        // Made now, so that /metrics shows it at 0 before any drop.
        _ = NotifySocketReader.droppedCounter
    }

    deinit {
        for subscription in subscriptions.withLock({ $0 }) { subscription.cancel() }
    }

    /// Subscribes to bluetoothd's signals, then reads its objects once with
    /// `GetManagedObjects`. Returns when the mirror is ready; bluetoothd not
    /// running is not an error (adapters are then `.unavailable`, and the
    /// mirror is built when it appears).
    public func start() async throws(BlueZError) {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        do {
            try await follow(connection)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        await rebuild()
    }

    /// Continues on a new bus connection after the bus dropped the old one
    /// (see `DBus.BusSupervisor`): follows bluetoothd there, rebuilds the
    /// mirror, and restores discovery and subscriptions, as after a
    /// bluetoothd restart. Until then every operation fails with
    /// `.bluetoothdUnavailable`.
    public func attach(_ connection: Connection) async throws(BlueZError) {
        let old = bus.withLock { bus -> Connection in
            defer { bus = connection }
            return bus
        }
        if old !== connection { busLost(DBusError(.disconnected, "the connection was replaced")) }
        let previous = subscriptions.withLock { subscriptions -> [SignalSubscription] in
            defer { subscriptions = [] }
            return subscriptions
        }
        for subscription in previous { subscription.cancel() }
        try await follow(connection)
        state.withLock { $0.busLost = nil }
        await rebuild()
    }

    /// Adds the signal handlers that keep the mirror on `connection`.
    private func follow(_ connection: Connection) async throws(BlueZError) {
        // The rules are on the bus before GetManagedObjects is sent, so
        // nothing that changes in between is missed. Signals are applied
        // on the connection's thread as they arrive: the mirror then
        // reflects every signal bluetoothd sent before any reply that a
        // caller is awaiting (see `connect`'s barrier). Both rules are
        // added at once (one round trip to the bus).
        async let owners = Self.outcome {
            try await connection.addSignalHandler(matching: Self.nameOwnerRule) { [weak self] message in
                self?.ownerChanged(message)
            }
        }
        async let signals = Self.outcome {
            try await connection.addSignalHandler(
                matching: Self.bluezRule,
                ended: { [weak self] error in self?.busLost(error) }
            ) { [weak self] message in
                guard let self, let signal = TreeSignal(message) else { return }
                self.apply(signal)
            }
        }
        let added = await [owners, signals]
        do {
            let subscriptions = try added.map { try $0.get() }
            self.subscriptions.withLock { $0 += subscriptions }
        } catch {
            for case .success(let subscription) in added { subscription.cancel() }
            throw BlueZError.wrapping(error)
        }
    }

    private static func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Ends what this central started: discovery sessions (StopDiscovery),
    /// notification subscriptions (StopNotify) and the connections it made
    /// (Disconnect) but kept ones (`leaveConnectedOnStop`), finishes every
    /// stream, and stops following bluetoothd.
    /// The connection stays open. Idempotent.
    public func stop() async {
        let (scanning, notifying, connected, monitors, monitorObjects) = state.withLock { state in
            let scanning = state.scanning.filter { $0.value.running }.map(\.key)
            let monitors = registeredMonitorRoots(in: state)
            let monitorObjects = state.sessions.values.compactMap(\.monitorPath)
            let notifying = state.subscriptions.filter { $0.value.notifying }.map(\.key)
            let connected = state.connectedByUs.filter { path in
                guard let device = state.tree.devices[path], device.connected else { return false }
                return !state.keptConnected.contains(AdapterDevice(adapter: device.adapter, address: device.address))
            }
            state.stopped = true
            return (scanning, notifying, connected, monitors, monitorObjects)
        }
        for path in monitorObjects { connection.objects.remove(at: path) }
        let deadline = ContinuousClock.now + .seconds(5)
        await withTaskGroup(of: Void.self) { group in
            for path in notifying {
                group.addTask { try? await self.stopBlueZNotify(path, deadline: deadline) }
            }
            for path in scanning {
                group.addTask { _ = try? await self.call(path, Adapter1.interface, "StopDiscovery", deadline: deadline) }
            }
            for path in monitors {
                group.addTask {
                    _ = try? await self.call(
                        path, Self.monitorManagerInterface, "UnregisterMonitor", [.objectPath(Self.monitorRoot(path))],
                        deadline: deadline)
                }
            }
            for path in connected {
                group.addTask { _ = try? await self.call(path, Device1.interface, "Disconnect", deadline: deadline) }
            }
        }
        let effects = update { state -> Effects in
            var effects = Effects()
            effects.finishSessions = state.sessions.values.map(\.continuation)
            let end = SubscriptionEnd(.centralStopped, BlueZError(.cancelled, "the central stopped"))
            for record in state.subscriptions.values {
                for subscriber in record.subscribers.values { state.deliveries.append(.ended(subscriber, end)) }
            }
            state.deliveries.append(.finishEvents)
            for waiter in state.waiters.values {
                state.deliveries.append(.outcome(waiter.promise, .failure(BlueZError(.cancelled, "the central stopped"))))
            }
            for request in state.slots.queue {
                state.deliveries.append(.outcome(request.promise, .failure(BlueZError(.cancelled, "the central stopped"))))
            }
            state.slots.queue = []
            state.sessions = [:]
            state.subscriptions = [:]
            state.waiters = [:]
            state.scanning = [:]
            state.connectedByUs = []
            return effects
        }
        perform(effects)
        for subscription in subscriptions.withLock({ $0 }) { subscription.cancel() }
    }

    /// A stream of everything that happens (or what `filter` passes), for
    /// as long as it is consumed. A consumer more than `bufferSize` events
    /// behind loses the oldest.
    public func events(_ filter: CentralEventFilter = .all, bufferSize: Int = 1024) -> AsyncStream<CentralEvent> {
        // Events are yielded after the state lock is released, under
        // `Broadcast`'s own lock, which orders them; `Broadcast` removes a
        // consumer that leaves without waiting for that lock, and checks the
        // filter before it wakes the consumer.
        eventBroadcast.subscribe(filter, bufferSize: bufferSize)
    }

    /// Calls `handler` with every event (or what `filter` passes), in the
    /// order of `events()`, with no task to wake: for a consumer that only
    /// hands each event on, such as the gateway's event log, on the hot path
    /// of every notification. It runs on the thread that delivers the
    /// central's decisions (usually the bus connection's loop thread, which
    /// received the signal; see `DeliveryQueue`), after the central's lock
    /// is released, one event at a time. It must be quick and must not
    /// block: events behind it wait. Returns an id for `removeEventHandler`,
    /// nil once the central has stopped.
    @discardableResult
    public func addEventHandler(
        _ filter: CentralEventFilter = .all, _ handler: @escaping @Sendable (CentralEvent) -> Void
    ) -> UInt64? {
        eventBroadcast.addHandler(filter, handler)
    }

    /// Stops calling the handler `id` (see `addEventHandler`).
    public func removeEventHandler(_ id: UInt64) { eventBroadcast.removeHandler(id) }

    /// Every signal bluetoothd emits, on one rule and so in one stream:
    /// InterfacesAdded, InterfacesRemoved and PropertiesChanged (and
    /// Device1.Disconnected where it exists) must be applied in the order
    /// bluetoothd sent them, which separate streams would not keep.
    static let bluezRule = MatchRule(sender: ObjectManager.bluez)
    static let nameOwnerRule = MatchRule(
        sender: .bus, interface: .bus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
        arguments: [0: ObjectManager.bluez.rawValue])
}
