import AsyncPrimitives
import BlueZ
import Synchronization

/// What the gateway does, apart from how it is asked: typed commands in,
/// typed results or a `GatewayCommandError` out. It knows nothing of HTTP
/// or MQTT; the REST routes (GatewayAPI) and the MQTT bridge are doors that
/// read their input into a command, call the core, and write the result or
/// the error in their own terms.
///
/// Each operation is implemented here once, for every door.
public final class GatewayCore: Sendable {
    public let central: Central
    /// Keeps the devices asked for connected.
    public let keeper: ConnectionKeeper
    /// Holds the standing subscriptions while their devices are connected.
    public let standing: StandingSubscriptions
    /// The adapter of a command that names none (nil: the central's choice).
    public let defaultAdapter: String?
    /// How long a connection may take when the command does not say.
    public let defaultTimeout: Duration
    /// The longest timeout a command may ask for.
    public let maximumTimeout: Duration
    /// Where kept devices are stored across restarts (nil: nowhere).
    let keptStore: (any KeptDeviceStore)?
    /// How many devices each client may keep (nil: no limit).
    let keptQuota: (any ClientQuota<AdapterDevice>)?
    /// Where standing subscriptions are stored across restarts (nil:
    /// nowhere; the core numbers them itself).
    let subscriptionStore: (any StandingSubscriptionStore)?
    /// How many standing subscriptions each client may hold (nil: no limit).
    let subscriptionQuota: (any ClientQuota<Int64>)?
    /// The peripheral role: the GATT applications and advertisements
    /// published through the gateway.
    public let peripheral: Peripheral
    /// Where publications are stored across restarts (nil: nowhere).
    let publicationStore: (any PublicationStore)?
    /// How many applications, and advertisements, each client may publish
    /// (nil: no limit).
    let applicationQuota: (any ClientQuota<String>)?
    let advertisementQuota: (any ClientQuota<String>)?
    /// Creates one standing subscription at a time, so that two identical
    /// requests make one subscription.
    let subscriptionCreation = AsyncSemaphore(slots: 1)
    /// The gateway's event log: the central's events, pairing and the
    /// keeper's announced steps, with their replay and their store (nil:
    /// none kept).
    public let log: EventLog<LoggedEvent>?
    /// The peripheral role's events (`peripheral.events`), for its streams
    /// (nil: none kept).
    public let peripheralLog: EventLog<PeripheralEvent>?
    /// Feeds `peripheralLog` (see `start`).
    private let peripheralPump = Mutex<Task<Void, Never>?>(nil)
    /// Where the core's events go: the log and the observer.
    let events: CoreEventOutlet
    /// Feeds the central's events into `log` (see `start`).
    private let eventHandler = Mutex<UInt64?>(nil)
    /// The pairing agent's questions waiting for a client's answer.
    public let pairingRequests: PairingRequests
    /// Notices pairings bluetoothd makes on its own.
    let pairingWatch = PairingWatch()
    /// Publishes the keeper's steps (see `start`).
    private let keeperPump = Mutex<Task<Void, Never>?>(nil)
    /// The fleet's keeping, once the gateway joins a fleet (`attachFleet`).
    let fleet = Mutex<(any FleetKeeping)?>(nil)
    /// The devices this gateway holds for the fleet (`holdForFleet`).
    let fleetHolds = Mutex<[BluetoothAddress: FleetHold]>([:])

    public init(
        central: Central, keeper: ConnectionKeeper, defaultAdapter: String? = nil, defaultTimeout: Duration = .seconds(30),
        maximumTimeout: Duration = .seconds(120), keptStore: (any KeptDeviceStore)? = nil,
        keptQuota: (any ClientQuota<AdapterDevice>)? = nil, subscriptionStore: (any StandingSubscriptionStore)? = nil,
        subscriptionQuota: (any ClientQuota<Int64>)? = nil, publicationStore: (any PublicationStore)? = nil,
        applicationQuota: (any ClientQuota<String>)? = nil, advertisementQuota: (any ClientQuota<String>)? = nil,
        log: EventLog<LoggedEvent>? = nil, peripheralLog: EventLog<PeripheralEvent>? = nil,
        events: (any CoreEventPublishing)? = nil,
        pairingRequestTimeout: Duration = .seconds(60)
    ) {
        self.central = central
        self.keeper = keeper
        self.standing = StandingSubscriptions(central: central)
        self.defaultAdapter = defaultAdapter
        self.defaultTimeout = defaultTimeout
        self.maximumTimeout = maximumTimeout
        self.keptStore = keptStore
        self.keptQuota = keptQuota
        self.subscriptionStore = subscriptionStore
        self.subscriptionQuota = subscriptionQuota
        self.peripheral = Peripheral(central: central)
        self.publicationStore = publicationStore
        self.applicationQuota = applicationQuota
        self.advertisementQuota = advertisementQuota
        self.log = log
        self.peripheralLog = peripheralLog
        let outlet = CoreEventOutlet(log: log, observer: events)
        self.events = outlet
        self.pairingRequests = PairingRequests(deadline: pairingRequestTimeout) { outlet.publish(.pairing($0)) }
    }

    /// Starts feeding the central's events into the event log, publishing
    /// the keeper's steps (`CoreEvent.keeping`), and following bluetoothd
    /// for the peripheral role (registering again what it lost when it
    /// comes back).
    public func start() {
        // On the thread that delivers each event, after the central's lock
        // is released: a value reaches the log (and its subscribers and the
        // store's queue) with no task woken for it, as it reaches
        // notification streams.
        let handler = central.addEventHandler { [self] event in
            log?.publish(.central(event))
            noticePairing(event)
        }
        eventHandler.withLock { $0 = handler }
        if let peripheralLog {
            let events = peripheral.events(bufferSize: 16_384)
            peripheralPump.withLock { $0 = Task { for await event in events { peripheralLog.publish(event) } } }
        }
        peripheral.start()
        let steps = keeper.events()
        let pump = Task { [keeper, events] in
            for await step in steps {
                events.publish(.keeping(step, announced: keeper.announces(step)))
            }
        }
        keeperPump.withLock { $0 = pump }
    }

    /// Stops keeping devices (they stay connected for the next start),
    /// holding standing subscriptions (they stay stored), publishing the
    /// keeper's steps and following the central's events.
    public func stop() {
        keeper.stop()
        standing.stop()
        keeperPump.withLock { $0.take() }?.cancel()
        peripheralPump.withLock { $0.take() }?.cancel()
        if let handler = eventHandler.withLock({ $0.take() }) { central.removeEventHandler(handler) }
    }

    /// Lets keep commands reach the fleet (the gateway joined one).
    public func attachFleet(_ fleet: any FleetKeeping) {
        self.fleet.withLock { $0 = fleet }
    }

    /// A command's timeout given in milliseconds (`timeout_ms`): 1 ms to the
    /// core's maximum; nil when none is given.
    public func timeout(milliseconds: Int?) throws(GatewayCommandError) -> Duration? {
        try Self.timeout(milliseconds: milliseconds, maximum: maximumTimeout)
    }

    /// `milliseconds` as a timeout of at most `maximum`.
    public static func timeout(milliseconds: Int?, maximum: Duration) throws(GatewayCommandError) -> Duration? {
        guard let milliseconds else { return nil }
        let limit = max(1, maximum.milliseconds)
        guard (1...limit).contains(milliseconds) else {
            throw .invalidParameter(name: "timeout_ms", reason: "must be an integer from 1 to \(limit), not '\(milliseconds)'")
        }
        return .milliseconds(milliseconds)
    }

    /// The adapter a command for `device` goes to: the one it names, else
    /// the core's default (nil: the central chooses).
    public func adapter(of device: DeviceTarget) -> String? {
        device.adapter ?? defaultAdapter
    }

    public func connect(_ command: ConnectCommand) async throws(GatewayCommandError) -> Device {
        do {
            return try await central.connect(
                command.device.address, adapter: adapter(of: command.device), timeout: command.timeout ?? defaultTimeout)
        } catch {
            throw .bluez(error)
        }
    }

    public func disconnect(_ command: DisconnectCommand) async throws(GatewayCommandError) -> Device {
        let adapter = adapter(of: command.device)
        do {
            try await central.disconnect(command.device.address, adapter: adapter, timeout: command.timeout)
            return try central.device(command.device.address, adapter: adapter)
        } catch {
            throw .bluez(error)
        }
    }

    public func read(_ command: ReadCommand) async throws(GatewayCommandError) -> [UInt8] {
        try await pairingIfRefused(command.characteristic.device, command.pairing, timeout: command.timeout) {
            () async throws(GatewayCommandError) in try await readOnce(command)
        }
    }

    public func write(_ command: WriteCommand) async throws(GatewayCommandError) {
        try await pairingIfRefused(command.characteristic.device, command.pairing, timeout: command.timeout) {
            () async throws(GatewayCommandError) in try await writeOnce(command)
        }
    }

    private func readOnce(_ command: ReadCommand) async throws(GatewayCommandError) -> [UInt8] {
        let target = command.characteristic
        do {
            return try await central.read(
                target.selector, of: target.device.address, adapter: adapter(of: target.device), offset: command.offset,
                timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }

    private func writeOnce(_ command: WriteCommand) async throws(GatewayCommandError) {
        let target = command.characteristic
        do {
            try await central.write(
                command.value, to: target.selector, of: target.device.address, adapter: adapter(of: target.device),
                type: command.type, offset: command.offset, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }

    /// The values arrive as the central's `characteristic-value` events;
    /// ending the subscription's iteration ends the subscription.
    public func subscribe(_ command: SubscribeCommand) async throws(GatewayCommandError) -> NotificationSubscription {
        let target = command.characteristic
        do {
            return try await central.subscribe(
                to: target.selector, of: target.device.address, adapter: adapter(of: target.device))
        } catch {
            throw .bluez(error)
        }
    }

    /// The values go to `sink` as they are delivered, on the delivering
    /// thread, with no task per consumer: for a door that writes each at
    /// once (an SSE stream). Cancelling the lease ends the subscription.
    public func subscribe(_ command: SubscribeCommand, sink: NotificationSink) async throws(GatewayCommandError)
        -> NotificationLease
    {
        let target = command.characteristic
        do {
            return try await central.subscribe(
                to: target.selector, of: target.device.address, adapter: adapter(of: target.device), sink: sink)
        } catch {
            throw .bluez(error)
        }
    }
}
