import AsyncPrimitives
import DBus

/// Everything the central knows and tracks, behind one lock
/// (`Central.state`). Only plain data and stream continuations: no locks
/// inside, no waiting while it is held.
struct CentralState {
    var tree = ObjectTree()
    /// Whether bluetoothd owns `org.bluez` and the tree mirrors it.
    var bluetoothdRunning = false
    /// Why the bus connection is lost, while it is (nil while it is up).
    var busLost: String?
    /// The availability consumers of `events()` were last told.
    var reportedAvailability = BlueZAvailability.available
    /// Signals received while `GetManagedObjects` is pending: applied after
    /// its reply, in order (nil when no rebuild is running).
    var rebuildQueue: [TreeSignal]?
    /// Bumped by every rebuild and by bluetoothd vanishing, so that a stale
    /// `GetManagedObjects` reply is dropped.
    var rebuildGeneration: UInt64 = 0
    var started = false
    var stopped = false
    var nextID: UInt64 = 1

    var eventSinks: [UInt64: AsyncStream<CentralEvent>.Continuation] = [:]
    var sessions: [UInt64: SessionRecord] = [:]
    /// Our discovery on each adapter (by adapter path).
    var scanning: [ObjectPath: ScanState] = [:]
    /// Notification subscriptions by characteristic path.
    var subscriptions: [ObjectPath: SubscriptionRecord] = [:]
    /// Operations waiting for a condition of the tree (connect, power).
    var waiters: [UInt64: TreeWaiter] = [:]
    /// Devices this central connected, to disconnect at `stop()`.
    var connectedByUs: Set<ObjectPath> = []
    /// Devices kept connected across restarts ("hci0/AA:BB:CC:DD:EE:FF"),
    /// which `stop()` leaves connected.
    var keptConnected: Set<String> = []

    var availability: BlueZAvailability {
        if let busLost { return .busDisconnected(busLost) }
        return bluetoothdRunning ? .available : .bluetoothdNotRunning
    }

    /// The error of an operation that needs BlueZ while it cannot be reached.
    var unavailability: BlueZError {
        BlueZError(.bluetoothdUnavailable, availability.detail)
    }

    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}

/// One discovery session.
struct SessionRecord {
    let adapterPath: ObjectPath
    let filter: DiscoveryFilter
    let continuation: AsyncStream<DiscoveryEvent>.Continuation
    /// The advertisement last reported per device, for "duplicates off".
    var reported: [ObjectPath: AdvertisementData] = [:]
    /// Told `.interrupted`; to be told `.resumed` when scanning restarts.
    var interrupted = false

    /// Offers an advertisement: reports the device if the filter wants it
    /// (without duplicates, only when its advertisement data changed) and
    /// remembers what was reported.
    mutating func offer(_ device: Device) {
        guard filter.matches(device) else { return }
        if let last = reported[device.path] {
            guard filter.allowDuplicates || !last.sameContent(as: device.advertisement) else { return }
            continuation.yield(.updated(device))
        } else {
            continuation.yield(.discovered(device))
        }
        reported[device.path] = device.advertisement
    }
}

/// What the central asked bluetoothd for on one adapter.
struct ScanState {
    /// StartDiscovery succeeded and StopDiscovery has not been sent.
    var running = false
    /// The filter last given with SetDiscoveryFilter.
    var applied: MergedDiscoveryFilter?
    /// Until when bluetoothd may still be restarting the scan for the last
    /// SetDiscoveryFilter (given while it was running).
    var restartSettles: ContinuousClock.Instant?
}

/// The consumers of one characteristic's notifications.
struct SubscriptionRecord {
    let devicePath: ObjectPath
    /// Fixed parts of every value delivered (looked up once, not per value).
    let adapter: String
    let device: BluetoothAddress
    let service: BluetoothUUID?
    let characteristic: BluetoothUUID
    let handle: UInt16?
    var subscribers: [UInt64: AsyncThrowingStream<NotificationEvent, any Error>.Continuation] = [:]
    /// StartNotify succeeded and StopNotify has not been sent.
    var notifying = false
    /// Told `.interrupted`; to be told `.resumed` once StartNotify succeeds
    /// again.
    var interrupted = false
}

/// An operation waiting until the tree shows an outcome.
struct TreeWaiter {
    /// Looks at the tree after each reducer step and the changes of that
    /// step; returns the outcome once there is one.
    let check: @Sendable (ObjectTree, [TreeChange]) -> Result<Void, BlueZError>?
    let promise: Promise<Void, BlueZError>
}

/// Work decided under the lock and done after it is released: finishing a
/// stream runs its termination handler, which takes the lock again.
struct Effects {
    var finishSessions: [AsyncStream<DiscoveryEvent>.Continuation] = []
    var finishSubscribers: [(AsyncThrowingStream<NotificationEvent, any Error>.Continuation, BlueZError?)] = []
    var finishEvents: [AsyncStream<CentralEvent>.Continuation] = []
    /// Adapters whose discovery must be brought in line with the sessions.
    var reconcile: Set<ObjectPath> = []
    /// Characteristics to StartNotify again after bluetoothd restarted.
    var resubscribe: [ObjectPath] = []

    var isEmpty: Bool {
        finishSessions.isEmpty && finishSubscribers.isEmpty && finishEvents.isEmpty && reconcile.isEmpty
            && resubscribe.isEmpty
    }
}
