import AsyncPrimitives
import DBus
import Synchronization

/// The peripheral role of BlueZ as a Swift API: GATT applications and
/// advertisements exported on the central's bus connection and registered
/// with bluetoothd (`GattManager1.RegisterApplication`,
/// `LEAdvertisingManager1.RegisterAdvertisement`).
///
/// ```swift
/// let peripheral = Peripheral(central: central)
/// peripheral.start()
/// let app = try await peripheral.publish(GATTApplication(services: [...]), adapter: "hci0")
/// let ad = try await peripheral.advertise(Advertisement(localName: "thermo"), adapter: "hci0")
/// try await peripheral.setValue([0x2a], of: BluetoothUUID(uuid16: 0x2a6e), in: app)
/// ```
///
/// Reads are answered from the stored value, writes stored and reported
/// (`events()`), unless a characteristic is `delegated`: then its requests
/// wait for `respond(to:with:)` until their deadline. Applications and
/// advertisements follow the central's availability: when bluetoothd comes
/// back or the bus connection is replaced, they are exported and
/// registered again.
public final class Peripheral: Sendable {
    public let central: Central
    public let options: Options

    public struct Options: Sendable {
        /// How long a delegated request waits for its answer.
        public var requestTimeout: Duration = .seconds(10)
        /// How long an indication waits for the central's confirmation.
        public var confirmationTimeout: Duration = .seconds(10)
        /// Timeout of the calls to bluetoothd.
        public var callTimeout: Duration = .seconds(20)
        /// The object path under which applications and advertisements are
        /// exported.
        public var root: ObjectPath = "/org/blegateway/peripheral"
        public init() {}
    }

    let state = Mutex(PeripheralState())
    /// The streams of `events()`.
    private let broadcast = Broadcast<PeripheralEvent>()
    private let follower = Mutex<Task<Void, Never>?>(nil)

    public init(central: Central, options: Options = Options()) {
        self.central = central
        self.options = options
    }

    /// Follows the central's availability to register everything again
    /// when BlueZ comes back, and disconnections to report centrals gone.
    public func start() {
        let events = central.events(.links, bufferSize: 1024)
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .availability(let availability): await self.availabilityChanged(availability)
                case .adapterState(let adapter, let adapterState): await self.adapterChanged(adapter, adapterState)
                case .disconnected(let device, let reason): self.disconnected(device.address, adapter: device.adapter, reason: reason)
                default: continue
                }
            }
        }
        follower.withLock { $0 = task }
    }

    /// Unregisters and unexports every application and advertisement and
    /// ends every event stream; returns how many of each bluetoothd
    /// acknowledged unregistering. Idempotent.
    @discardableResult
    public func stop() async -> (applications: Int, advertisements: Int) {
        follower.withLock { $0?.cancel() }
        let (applications, advertisements) = state.withLock { state in
            state.stopped = true
            return (Array(state.applications.keys), Array(state.advertisements.keys))
        }
        var unregistered = (applications: 0, advertisements: 0)
        for id in applications where (try? await removeApplication(id)) == true { unregistered.applications += 1 }
        for id in advertisements where (try? await stopAdvertising(id)) == true { unregistered.advertisements += 1 }
        let pending = state.withLock { state in
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for request in pending { request.promise.resolve(.success(.attError(PeripheralState.unlikelyError))) }
        broadcast.finish()
        return unregistered
    }

    /// A stream of what centrals do, for as long as it is consumed.
    public func events(bufferSize: Int = 1024) -> AsyncStream<PeripheralEvent> {
        broadcast.subscribe(bufferSize: bufferSize)
    }

    func emit(_ event: PeripheralEvent) {
        broadcast.yield(event)
    }

    /// The adapter's object path, from the central's mirror.
    func adapterPath(_ adapter: String?) throws(BlueZError) -> (id: String, path: ObjectPath) {
        let found = try central.adapter(adapter)
        return (found.id, found.path)
    }

    /// Calls a method of bluetoothd.
    func callBluetoothd(_ path: ObjectPath, _ interface: InterfaceName, _ method: MemberName, _ arguments: [Value])
        async throws(BlueZError)
    {
        do {
            _ = try await central.connection.call(
                destination: ObjectManager.bluez, path: path, interface: interface, method: method,
                arguments: arguments, timeout: options.callTimeout)
        } catch let error as DBusError where error.isNoReply {
            throw BlueZError(.timeout, "bluetoothd did not answer \(method) in time", dbusName: error.name.rawValue)
        } catch let error as DBusError where error.isServiceUnknown || error.isDisconnected {
            throw BlueZError(.bluetoothdUnavailable, "bluetoothd is not reachable: \(error.message)", dbusName: error.name.rawValue)
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    /// A device disconnected from an adapter: if it was a central of the
    /// adapter's applications, it is gone from each.
    func disconnected(_ device: BluetoothAddress, adapter: String, reason: String?) {
        let applications = state.withLock { state -> [String] in
            let ids = state.applications.values.filter { $0.adapter == adapter && $0.seen.contains(device) }.map(\.id)
            for id in ids { state.applications[id]?.seen.remove(device) }
            return ids.sorted()
        }
        for id in applications { emit(.centralGone(application: id, adapter: adapter, device: device, reason: reason)) }
    }

    /// An adapter went away: bluetoothd forgot what was registered on it.
    /// An adapter is there (again, or for the first time, as at boot when
    /// the controller attaches after bluetoothd started): what waits for
    /// it is registered.
    func adapterChanged(_ adapter: String, _ adapterState: AdapterState) async {
        guard adapterState != .unavailable else {
            state.withLock { state in
                for (id, record) in state.applications where record.adapter == adapter { state.applications[id]?.registered = false }
                for (id, record) in state.advertisements where record.adapter == adapter { state.advertisements[id]?.registered = false }
            }
            return
        }
        await registerWaiting { $0 == adapter }
    }

    /// BlueZ became reachable: export and register everything again (on a
    /// new connection the objects are new too); unreachable: bluetoothd
    /// has forgotten every registration.
    func availabilityChanged(_ availability: BlueZAvailability) async {
        guard availability == .available else {
            state.withLock { state in
                for id in state.applications.keys { state.applications[id]?.registered = false }
                for id in state.advertisements.keys { state.advertisements[id]?.registered = false }
            }
            return
        }
        await registerWaiting { _ in true }
    }

    /// Registers what is not registered, on the adapters `matching`, and
    /// reports each (`reregistered`, with the error if it failed).
    private func registerWaiting(on matching: (String) -> Bool) async {
        let (applications, advertisements) = state.withLock { state in
            (state.applications.values.filter { !$0.registered && matching($0.adapter) }.map(\.id).sorted(),
             state.advertisements.values.filter { !$0.registered && matching($0.adapter) }.map(\.id).sorted())
        }
        for id in applications {
            do {
                try await registerApplication(id)
                emit(.reregistered(kind: "application", id: id, error: nil))
            } catch {
                emit(.reregistered(kind: "application", id: id, error: error.description))
            }
        }
        for id in advertisements {
            do {
                try await registerAdvertisement(id)
                emit(.reregistered(kind: "advertisement", id: id, error: nil))
            } catch {
                emit(.reregistered(kind: "advertisement", id: id, error: error.description))
            }
        }
    }
}

/// The interfaces the peripheral calls on bluetoothd.
enum PeripheralManagers {
    static let gattManager: InterfaceName = "org.bluez.GattManager1"
    static let advertisingManager: InterfaceName = "org.bluez.LEAdvertisingManager1"
}
