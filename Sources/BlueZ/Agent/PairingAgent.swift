import DBus
import Synchronization

/// The gateway's `org.bluez.Agent1` (doc/org.bluez.Agent.rst): an object
/// exported on the central's bus connection and registered with
/// `org.bluez.AgentManager1`, which bluetoothd asks for passkeys, PINs,
/// confirmations and authorizations while it pairs.
///
/// Every question goes to the `handler` as a `PairingRequest`; its answer
/// becomes the reply (`.reject` is `org.bluez.Error.Rejected`, `.cancel`
/// `org.bluez.Error.Canceled`). bluetoothd's `Cancel` cancels the tasks of
/// the questions in flight, and the handler should then answer `.cancel`.
/// Display requests (`DisplayPasskey`, `DisplayPinCode`) are answered at
/// once; the handler still sees them.
///
/// The agent is registered again whenever BlueZ becomes reachable again
/// (bluetoothd restarted, or the central moved to a new bus connection),
/// since bluetoothd forgets agents with their owner and a new connection
/// has objects of its own.
public final class PairingAgent: Sendable {
    public typealias Handler = @Sendable (PairingRequest) async -> PairingAnswer

    public struct Configuration: Sendable {
        public var capability: AgentCapability
        /// Whether to ask to be the default agent (`RequestDefaultAgent`),
        /// which bluetoothd asks on behalf of pairing that the peer or
        /// another client started, not only the gateway's own `Pair`.
        public var isDefault: Bool
        /// Where the agent object is exported.
        public var path: ObjectPath
        /// Confirmations and authorizations asked about a device whose
        /// address is one of this host's own adapters are accepted without
        /// asking the handler. One bluetoothd serving two adapters that
        /// pair with each other asks its default agent on behalf of the
        /// responding side too: that side is this host, so its consent is
        /// the gateway's own.
        public var acceptsLocalAdapters: Bool

        public init(
            capability: AgentCapability = .noInputNoOutput, isDefault: Bool = true,
            path: ObjectPath = "/org/blegateway/agent", acceptsLocalAdapters: Bool = true
        ) {
            self.capability = capability
            self.isDefault = isDefault
            self.path = path
            self.acceptsLocalAdapters = acceptsLocalAdapters
        }
    }

    public let configuration: Configuration
    let central: Central
    let handler: Handler

    struct State {
        var pending: [UInt64: Task<PairingAnswer, Never>] = [:]
        var nextID: UInt64 = 1
        var registered = false
        var watcher: Task<Void, Never>?
        /// Registering again after bluetoothd did not answer in time.
        var retry: Task<Void, Never>?
        var stopped = false
    }

    let state = Mutex(State())

    public init(central: Central, configuration: Configuration = Configuration(), handler: @escaping Handler) {
        self.central = central
        self.configuration = configuration
        self.handler = handler
    }

    /// Whether bluetoothd has the agent registered (as far as the agent
    /// knows: `Release` and BlueZ going away clear it).
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// Exports the agent and registers it (now if bluetoothd runs, and
    /// each time BlueZ is reachable again). Throws when bluetoothd runs
    /// and refuses the registration.
    public func start() async throws(BlueZError) {
        let events = central.events(.links, bufferSize: 64)
        let watcher = Task { [weak self] in
            for await event in events {
                guard case .availability(let availability) = event, let self else { continue }
                if availability == .available {
                    try? await self.register()
                } else {
                    self.state.withLock { $0.registered = false }
                }
            }
        }
        state.withLock { $0.watcher = watcher }
        guard central.isBluetoothdRunning else { return }
        do {
            try await register()
        } catch where error.code == .timeout {
            // bluetoothd did not answer in time (a host busy starting):
            // registered as soon as it answers, not left without an agent
            // until BlueZ restarts (pairing would fall back to Just Works).
            retryRegistration()
        }
    }

    /// Tries to register again, one second apart and then less often (up
    /// to a minute), until it is registered, bluetoothd refuses, or the
    /// agent stops.
    private func retryRegistration() {
        let retry = Task { [weak self] in
            var pause = Duration.seconds(1)
            while !Task.isCancelled {
                try? await Task.sleep(for: pause)
                guard let self, !self.state.withLock({ $0.stopped || $0.registered }) else { return }
                do throws(BlueZError) {
                    try await self.register()
                    return
                } catch {
                    guard error.code == .timeout else { return }
                    pause = min(pause * 2, .seconds(60))
                }
            }
        }
        state.withLock { $0.retry = retry }
    }

    /// Unregisters the agent (bluetoothd then stops asking it) and removes
    /// its object. Questions in flight are cancelled.
    public func stop() async {
        let (watcher, pending, registered) = state.withLock { state in
            state.retry?.cancel()
            defer {
                state.retry = nil
                state.watcher = nil
                state.pending = [:]
                state.registered = false
                state.stopped = true
            }
            return (state.watcher, Array(state.pending.values), state.registered)
        }
        watcher?.cancel()
        for task in pending { task.cancel() }
        if registered {
            _ = try? await central.call(
                Self.managerPath, Self.managerInterface, "UnregisterAgent", [.objectPath(configuration.path)],
                deadline: .now + .seconds(5))
        }
        central.connection.objects.remove(at: configuration.path)
    }

    /// Exports the object on the central's current connection and asks
    /// bluetoothd to use it.
    func register() async throws(BlueZError) {
        guard !state.withLock({ $0.stopped }) else { return }
        let connection = central.connection
        do {
            try connection.objects.add(interface, at: configuration.path)
        } catch {
            throw BlueZError.wrapping(error)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        do {
            _ = try await central.call(
                Self.managerPath, Self.managerInterface, "RegisterAgent",
                [.objectPath(configuration.path), .string(configuration.capability.rawValue)], deadline: deadline)
        } catch where error.code == .alreadyExists {
            // Registered before by this connection: bluetoothd keeps it.
        }
        if configuration.isDefault {
            _ = try await central.call(
                Self.managerPath, Self.managerInterface, "RequestDefaultAgent", [.objectPath(configuration.path)],
                deadline: deadline)
        }
        state.withLock { $0.registered = true }
    }

    static let managerPath: ObjectPath = "/org/bluez"
    static let managerInterface: InterfaceName = "org.bluez.AgentManager1"
    static let rejected = ErrorName(unchecked: "org.bluez.Error.Rejected")
    static let canceled = ErrorName(unchecked: "org.bluez.Error.Canceled")
}
