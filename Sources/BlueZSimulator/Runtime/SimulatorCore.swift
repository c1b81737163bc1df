import DBus

/// The simulated bluetoothd: all adapters, devices and GATT state, served
/// through one connection's object server.
///
/// An actor: D-Bus method handlers, the clock task and the control API all
/// enter it, so the state needs no locks. Work that takes time (connecting,
/// pairing) awaits inside the actor and re-checks the state afterwards, as
/// bluetoothd's callbacks do.
actor SimulatorCore {
    let bus: Connection
    let options: SimulatorOptions
    var scenario: Scenario
    var adapters: [String: AdapterState] = [:]
    /// Adapter ids in scenario order.
    var adapterOrder: [String] = []
    var devices: [ObjectPath: DeviceState] = [:]
    var timers = TimerQueue<TimerEvent>()
    var random: SplitMix64
    var interfaces: Interfaces?
    var clock: Task<Void, Never>?
    var clientWatch: Task<Void, Never>?
    var agents: [BusName: (path: ObjectPath, capability: String)] = [:]
    var defaultAgent: BusName?
    var running = false
    /// While the simulated bluetoothd is stopped: the bonds and trust it
    /// keeps in storage (nil while it runs).
    var stoppedBonds: [(DeviceAddress, Bool, Bool)]?
    /// Counts for tests and benchmarks.
    var counters = SimulatorStatistics()
    /// Reads on their way to a peripheral, by attribute path.
    var readsInFlight: [ObjectPath: ReadInFlight] = [:]
    /// Attributes whose write request is on its way to the peripheral.
    var writesInFlight: Set<ObjectPath> = []
    /// Registered GATT applications and advertisements (the peripheral role).
    var peripheral = PeripheralRegistry()
    /// Registered advertisement monitors (passive scanning, bluetoothd -E).
    var monitors = MonitorRegistry()

    enum TimerEvent {
        case advertise(ObjectPath, generation: UInt64)
        case tick(ObjectPath, characteristic: Int, generation: UInt64)
        case expire(ObjectPath, generation: UInt64)
        case leaveRange(ObjectPath, generation: UInt64)
        case returnToRange(ObjectPath, generation: UInt64)
    }

    init(bus: Connection, scenario: Scenario, options: SimulatorOptions) {
        self.bus = bus
        self.scenario = scenario
        var options = options
        if let connectedSignal = scenario.connectedSignal { options.connectedSignal = connectedSignal }
        if let experimental = scenario.experimental { options.experimental = experimental }
        self.options = options
        random = SplitMix64(seed: options.seed)
    }

    // MARK: Lifecycle

    /// Exports the objects, takes the name `org.bluez` and starts the clock.
    func start() async throws {
        let interfaces = Interfaces(core: self)
        self.interfaces = interfaces
        running = true
        bus.objects.addObjectManager(at: .root)
        try exportRoot()
        for spec in scenario.adapters { try addAdapter(spec) }
        for spec in scenario.devices { try addDevice(spec) }
        try await watchClients()
        let reply = try await bus.requestName(Self.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw DBusError(.failed, "org.bluez is already owned on this bus")
        }
        startClock()
    }

    /// Gives up the name and removes every object.
    func stop() async {
        running = false
        clock?.cancel()
        clock = nil
        clientWatch?.cancel()
        clientWatch = nil
        if bus.isConnected { try? await bus.releaseName(Self.busName) }
        removeAllObjects()
    }

    /// Drops the name and every object and takes them again, as a
    /// bluetoothd restart does: connections drop, discovered devices are
    /// forgotten, paired devices come back from storage.
    func restart() async throws {
        try await stopDaemon()
        try await startDaemon()
    }

    /// Drops the name and every object, as bluetoothd exiting does; bonds
    /// and trust are kept, as in bluetoothd's storage. Until `startDaemon`,
    /// `org.bluez` has no owner on the bus.
    func stopDaemon() async throws {
        guard stoppedBonds == nil else { return }
        clock?.cancel()
        clock = nil
        if bus.isConnected { try await bus.releaseName(Self.busName) }
        stoppedBonds = devices.values.map { ($0.spec.address, $0.paired, $0.trusted) }
        removeAllObjects()
    }

    /// Exports the objects again and takes `org.bluez`, as bluetoothd
    /// starting does: paired devices come back from storage.
    func startDaemon() async throws {
        guard let stored = stoppedBonds else { return }
        var scenario = self.scenario
        for index in scenario.devices.indices {
            guard let (_, paired, trusted) = stored.first(where: { $0.0 == scenario.devices[index].address }) else {
                continue
            }
            scenario.devices[index].paired = paired
            scenario.devices[index].trusted = trusted
        }
        self.scenario = scenario
        stoppedBonds = nil
        try exportRoot()
        for spec in scenario.adapters { try addAdapter(spec) }
        for spec in scenario.devices { try addDevice(spec) }
        let reply = try await bus.requestName(Self.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw DBusError(.failed, "org.bluez is already owned on this bus")
        }
        counters.restarts += 1
        startClock()
    }

    /// Whether the simulated bluetoothd is stopped (`stopDaemon`).
    var isDaemonStopped: Bool { stoppedBonds != nil }

    private func removeAllObjects() {
        timers.removeAll()
        for device in devices.values { holdGATT(device, false) }
        // An exiting bluetoothd closes the sockets AcquireNotify and
        // AcquireWrite handed out: their holders see the hang-up.
        for device in devices.values { endAcquiredSockets(device) }
        for device in devices.values where device.exported { bus.objects.remove(at: device.path) }
        devices.removeAll()
        for adapter in adapters.values { bus.objects.remove(at: adapter.path) }
        adapters.removeAll()
        adapterOrder.removeAll()
        agents.removeAll()
        defaultAgent = nil
        peripheral.removeAll()
        for application in monitors.applications.values { application.watch?.cancel() }
        monitors.applications.removeAll()
        for path in bus.objects.paths(under: "/org/bluez") { bus.objects.remove(at: path) }
    }

    static let busName: BusName = "org.bluez"

    // MARK: The clock

    private func startClock() {
        clock = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                let pause = await self.runDueTimers()
                if pause == .zero {
                    await Task.yield()
                } else {
                    try? await Task.sleep(for: pause, tolerance: .milliseconds(1))
                }
            }
        }
    }

    /// Runs the timers that are due and returns how long to sleep: until
    /// the next one, at least 2 ms (events due meanwhile run together, as
    /// a batch) and at most 50 ms (so new timers start promptly). A batch
    /// stops after 5,000 events so that method calls waiting for the actor
    /// get in between batches.
    func runDueTimers() -> Duration {
        let now = ContinuousClock.now
        var processed = 0
        while processed < 5_000, let (event, due) = timers.popDue(now) {
            handle(event, due: due, now: now)
            processed += 1
        }
        if processed == 5_000 { return .zero }
        guard let next = timers.nextDue else { return .milliseconds(50) }
        let wait = next - ContinuousClock.now
        return min(max(wait, .milliseconds(2)), .milliseconds(50))
    }

    private func handle(_ event: TimerEvent, due: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        switch event {
        case .advertise(let path, let generation):
            advertise(path, generation: generation, due: due, now: now)
        case .tick(let path, let index, let generation):
            tick(path, characteristic: index, generation: generation, due: due, now: now)
        case .expire(let path, let generation):
            expire(path, generation: generation)
        case .leaveRange(let path, let generation):
            leaveRange(path, generation: generation)
        case .returnToRange(let path, let generation):
            returnToRange(path, generation: generation)
        }
    }

    /// A latency from the scenario, scaled by `timing`.
    func scaled(_ seconds: Double) -> Duration {
        .seconds(max(0, seconds * scenario.timing))
    }

    func sleep(scaled seconds: Double) async {
        let duration = scaled(seconds)
        if duration > .zero { try? await Task.sleep(for: duration) }
    }
}

/// Counts of what the simulator did, for tests and benchmarks.
public struct SimulatorStatistics: Sendable, Hashable {
    public var advertisingReports = 0
    public var notifications = 0
    public var connections = 0
    public var restarts = 0
    /// Scans restarted to apply a changed discovery filter.
    public var scanRestarts = 0
    /// `ReadValue` calls received (characteristics and descriptors).
    public var readValueCalls = 0
    /// Reads sent to peripherals: `ReadValue` calls merged into a read in
    /// flight are not counted again.
    public var peripheralReads = 0
    /// `WriteValue` calls received (characteristics and descriptors).
    public var writeValueCalls = 0
    /// GATT calls answered `InProgress` (a read at another offset, a
    /// second write, while one is in flight).
    public var inProgressReplies = 0
    /// Packets written by clients on AcquireWrite (or AcquireNotify)
    /// sockets and sent as Write Commands.
    public var acquiredWrites = 0
}
