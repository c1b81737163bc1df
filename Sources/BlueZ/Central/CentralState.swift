import AsyncPrimitives
import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything the central knows and tracks, behind one lock
/// (`Central.state`). Plain data and stream continuations; the lock
/// protects decisions, not calls into other code. What consumers are to be
/// told (notification sinks and streams, event handlers and streams,
/// waiting operations) is queued in `deliveries` and delivered after the
/// lock is released (`Central.update`). The one call made while it is held
/// is the yield to a discovery session's `AsyncStream` continuation, whose
/// result (a dropped event) decides what the session remembers: the
/// standard library's own short lock, no code of ours or of a caller.
/// Nothing waits while the lock is held.
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
    /// What consumers are to be told, in order, once the lock is released.
    var deliveries = DeliveryQueue()
    var nextID: UInt64 = 1

    var sessions: [UInt64: SessionRecord] = [:]
    /// Our discovery on each adapter (by adapter path).
    var scanning: [ObjectPath: ScanState] = [:]
    /// Notification subscriptions by characteristic path.
    var subscriptions: [ObjectPath: SubscriptionRecord] = [:]
    /// Subscriptions served by an AcquireNotify socket (Central+AcquiredNotify).
    var acquiredNotify: [ObjectPath: AcquiredNotify] = [:]
    /// Operations waiting for a condition of the tree (connect, power).
    var waiters: [UInt64: TreeWaiter] = [:]
    /// Connection slots per adapter, and the connections waiting for one.
    var slots = ConnectionSlots()
    /// Devices this central connected, to disconnect at `stop()`.
    var connectedByUs: Set<ObjectPath> = []
    /// Devices kept connected across restarts, which `stop()` leaves
    /// connected.
    var keptConnected: Set<AdapterDevice> = []

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
    /// When the session began: the sighting time of devices listed at its
    /// start that the central has not heard itself.
    let started = Date()
    /// The advertisement last reported per device, for "duplicates off".
    var reported: [ObjectPath: AdvertisementData] = [:]
    /// When each device's last `.updated` (or `.discovered`) was yielded,
    /// for `minimumUpdateInterval`.
    var reportedAt: [ObjectPath: ContinuousClock.Instant] = [:]
    /// The smoothed RSSI per device, for `rssiSmoothing`.
    var smoothed: [ObjectPath: Double] = [:]
    /// Told `.interrupted`; to be told `.resumed` when scanning restarts.
    var interrupted = false
    /// Whether the session needs bluetoothd's discovery now: always for an
    /// active session, never for a monitor's, in its windows for a
    /// low-duty one.
    var discovers = true
    /// A passive session's advertisement monitor (exported object), while
    /// it has one.
    var monitorPath: ObjectPath?
    /// Its patterns, to export the monitor again on a new bus connection.
    var monitorPatterns: [AdvertisementPattern] = []
    /// The devices its monitor found and has not lost (nil: not a monitor
    /// session). A monitor session reports only these.
    var monitored: Set<ObjectPath>?
    /// Resolved when bluetoothd activates the monitor (or releases it,
    /// refusing it).
    var activation: Promise<Void, BlueZError>?

    init(adapterPath: ObjectPath, filter: DiscoveryFilter, continuation: AsyncStream<DiscoveryEvent>.Continuation) {
        self.adapterPath = adapterPath
        self.filter = filter
        self.continuation = continuation
    }

    /// Offers an advertisement: reports the device if the filter wants it
    /// (without duplicates, only when its advertisement data changed; no
    /// more often than the minimum interval) and remembers what was
    /// reported. A device reported silent comes back only when heard again.
    mutating func offer(_ device: Device, now: ContinuousClock.Instant = .now, date: Date = Date()) {
        if let monitored, !monitored.contains(device.path) { return }
        guard filter.matches(device) else { return }
        var device = device
        if let weight = filter.rssiSmoothing, let rssi = device.advertisement.signalStrength {
            let average = smoothed[device.path].map { $0 + weight * (Double(rssi) - $0) } ?? Double(rssi)
            smoothed[device.path] = average
            device.smoothedRSSI = (average * 10).rounded() / 10
        }
        if let last = reported[device.path] {
            guard filter.allowDuplicates || !last.sameContent(as: device.advertisement) else { return }
            if let interval = filter.minimumUpdateInterval, let at = reportedAt[device.path], now - at < interval {
                return
            }
            yield(.updated(device))
        } else {
            if let timeout = filter.presenceTimeout, isSilent(device, timeout: timeout, now: date) { return }
            yield(.discovered(device))
        }
        reported[device.path] = device.advertisement
        reportedAt[device.path] = now
    }

    /// Yields `event`. A consumer that fell more than the session's buffer
    /// behind loses the oldest event; if that one was a device's first
    /// report, the device is reported `.discovered` again when next heard,
    /// so the consumer never gets `.updated` for a device it was not told of.
    private mutating func yield(_ event: DiscoveryEvent) {
        guard case .dropped(.discovered(let dropped)) = continuation.yield(event) else { return }
        reported[dropped.path] = nil
        reportedAt[dropped.path] = nil
    }

    /// Whether `device` was last heard longer than `timeout` ago.
    func isSilent(_ device: Device, timeout: Duration, now: Date = Date()) -> Bool {
        let heard = max(device.lastSeen ?? started, started)
        return now.timeIntervalSince(heard) > timeout.secondsValue
    }

    /// Reports `.silent` every reported device of `tree` not heard within
    /// the presence timeout, and forgets it until it is heard again.
    mutating func sweepSilent(in tree: ObjectTree, now: Date = Date()) {
        guard let timeout = filter.presenceTimeout else { return }
        for path in Array(reported.keys) {
            guard let device = tree.devices[path], isSilent(device, timeout: timeout, now: now) else { continue }
            reported[path] = nil
            reportedAt[path] = nil
            smoothed[path] = nil
            continuation.yield(.silent(device))
        }
    }

    /// Forgets a device (removed, or scanning interrupted).
    mutating func forget(_ path: ObjectPath) -> Bool {
        monitored?.remove(path)
        reportedAt[path] = nil
        smoothed[path] = nil
        return reported.removeValue(forKey: path) != nil
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
    /// Our advertisement monitor root is registered with bluetoothd
    /// (`RegisterMonitor` answered and `UnregisterMonitor` not sent). Like
    /// the rest of this state, forgotten when bluetoothd or the adapter
    /// goes (bluetoothd forgets it too).
    var monitorRegistered = false
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
    var subscribers: [UInt64: NotificationConsumer] = [:]
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

/// Work decided under the lock and done after it is released, beside the
/// deliveries (which keep their order in `CentralState.deliveries`):
/// finishing a stream runs its termination handler, which takes the lock
/// again, and the rest starts tasks.
struct Effects {
    var finishSessions: [AsyncStream<DiscoveryEvent>.Continuation] = []
    /// Adapters whose discovery must be brought in line with the sessions.
    var reconcile: Set<ObjectPath> = []
    /// Characteristics to StartNotify again after bluetoothd restarted.
    var resubscribe: [ObjectPath] = []

    var isEmpty: Bool {
        finishSessions.isEmpty && reconcile.isEmpty && resubscribe.isEmpty
    }
}
