import BlueZ
import PersistedState
import Synchronization

/// The standing subscriptions (`POST /v1/subscriptions`, and those a
/// gateway holds for the fleet): each is held while its device is connected
/// and taken again after every reconnect, whether or not any client
/// listens. Its values reach `/v1/events` as
/// `characteristic-value` events, as every value the central receives
/// does; a notification stream of the same characteristic shares the one
/// BlueZ subscription (the central counts its consumers).
///
/// It holds them, nothing more: storing them and counting them against the
/// quotas is the core's commands' (`GatewayCore.createSubscription`,
/// `removeSubscription`, `restore`), which start and remove them here.
public final class StandingSubscriptions: Sendable {
    /// One subscription and how holding it goes.
    public struct Entry: Sendable {
        public enum Status: String, Sendable {
            /// Subscribed: values flow.
            case active
            /// Waiting for the device to be connected with its services
            /// resolved.
            case waiting
        }

        public let subscription: StandingSubscription
        public internal(set) var status: Status = .waiting
        /// Why the last attempt to subscribe failed or the subscription
        /// ended, if it did.
        public internal(set) var lastReason: String?
        var task: Task<Void, Never>?
    }

    private struct State {
        var entries: [Int64: Entry] = [:]
        var stopped = false
        var nextLocalID: Int64 = 1
    }

    let central: Central
    private let state = Mutex(State())

    public init(central: Central) {
        self.central = central
    }

    /// An id for a subscription of a gateway without a store.
    public func makeLocalID() -> Int64 {
        state.withLock { state in
            defer { state.nextLocalID += 1 }
            return state.nextLocalID
        }
    }

    /// Starts holding `subscription`.
    public func start(_ subscription: StandingSubscription) {
        let added = state.withLock { state -> Bool in
            guard !state.stopped, state.entries[subscription.id] == nil else { return false }
            state.entries[subscription.id] = Entry(subscription: subscription)
            return true
        }
        guard added else { return }
        let task = Task { [self] in await hold(subscription) }
        state.withLock { $0.entries[subscription.id]?.task = task }
    }

    /// Stops holding the subscription `id`; true if there was one.
    public func remove(_ id: Int64) -> Bool {
        let entry = state.withLock { $0.entries.removeValue(forKey: id) }
        entry?.task?.cancel()
        return entry != nil
    }

    public func entry(_ id: Int64) -> Entry? { state.withLock { $0.entries[id] } }

    /// The subscription held with the same adapter, device, characteristic,
    /// service and mode as `subscription` (whoever made it), if any.
    public func entry(identicalTo subscription: StandingSubscription) -> Entry? {
        state.withLock { state in
            state.entries.values.first { entry in
                let held = entry.subscription
                return held.adapter == subscription.adapter && held.address == subscription.address
                    && held.characteristic == subscription.characteristic && held.service == subscription.service
                    && held.mode == subscription.mode
            }
        }
    }

    /// Every standing subscription, by id.
    public var entries: [Entry] { state.withLock { $0.entries.values.sorted { $0.subscription.id < $1.subscription.id } } }

    /// Stops holding every subscription (they stay stored for the next start).
    public func stop() {
        let tasks = state.withLock { state in
            state.stopped = true
            return state.entries.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    private func update(_ id: Int64, status: Entry.Status, reason: String?) {
        state.withLock { state in
            state.entries[id]?.status = status
            if let reason { state.entries[id]?.lastReason = reason }
        }
    }

    /// The characteristic a stored subscription names; nil when what was
    /// stored is not a UUID.
    public static func selector(_ subscription: StandingSubscription) -> AttributeSelector? {
        switch subscription.characteristic {
        case .handle(let handle): return .handle(handle)
        case .uuid(let text):
            guard let uuid = try? BluetoothUUID(parsing: text) else { return nil }
            return .uuid(uuid, service: subscription.service.flatMap { try? BluetoothUUID(parsing: $0) })
        }
    }

    /// Holds one subscription until cancelled: subscribes whenever the
    /// device is connected with its services resolved, and waits for that
    /// again when the subscription ends.
    private func hold(_ subscription: StandingSubscription) async {
        guard let address = BluetoothAddress(subscription.address), let selector = Self.selector(subscription) else {
            update(subscription.id, status: .waiting, reason: "the stored subscription cannot be read")
            return
        }
        let adapter = subscription.adapter
        // Followed from the start, so that a device becoming ready while
        // an attempt fails is not missed.
        let changes = central.events(.link(of: address, adapter: adapter), bufferSize: 256)
        var iterator = changes.makeAsyncIterator()
        // Removed before this task was even recorded: nothing to hold.
        while !Task.isCancelled, state.withLock({ $0.entries[subscription.id] != nil }) {
            if let device = try? central.device(address, adapter: adapter), device.connected, device.servicesResolved {
                do {
                    let values = try await central.subscribe(to: selector, of: address, adapter: adapter)
                    update(subscription.id, status: .active, reason: nil)
                    for try await _ in values {}
                    if Task.isCancelled { return }
                    update(subscription.id, status: .waiting, reason: "ended")
                } catch {
                    if Task.isCancelled { return }
                    let reason = (error as? BlueZError)?.code.rawValue ?? "\(error)"
                    update(subscription.id, status: .waiting, reason: reason)
                    // Connected but not subscribable (no such characteristic
                    // yet, not notifying): wait for the next connection.
                    if (try? central.device(address, adapter: adapter))?.connected == true {
                        guard await Self.next(.disconnected, of: address, adapter: adapter, in: &iterator) else { return }
                    }
                }
                continue
            }
            update(subscription.id, status: .waiting, reason: nil)
            guard await Self.next(.ready, of: address, adapter: adapter, in: &iterator) else { return }
        }
    }

    private enum Awaited { case ready, disconnected }

    /// Waits for the device's next services-resolved (or disconnection)
    /// event; false when the central's events end or the task is cancelled.
    private static func next(
        _ awaited: Awaited, of address: BluetoothAddress, adapter: String,
        in iterator: inout AsyncStream<CentralEvent>.Iterator
    ) async -> Bool {
        while let event = await iterator.next() {
            switch (awaited, event) {
            case (.ready, .servicesResolved(let device)) where device.address == address && device.adapter == adapter:
                return true
            case (.ready, .connected(let device)) where device.address == address && device.adapter == adapter
                && device.servicesResolved:
                return true
            case (.disconnected, .disconnected(let device, _)) where device.address == address && device.adapter == adapter:
                return true
            default: continue
            }
        }
        return false
    }
}
