import BlueZ
import GatewayCore
import PersistedState
import Synchronization
import Testing

/// Creating and removing standing subscriptions through the core, on the
/// simulator, with a store and a quota that record what the core asks of
/// them.
@Suite struct SubscriptionCommandTests {
    /// Subscriptions held in memory, numbered from 1 as the state store
    /// numbers them; fails every change while `failure` is set, and takes
    /// `delay` over each addition (so that two creations overlap).
    final class MemoryStore: StandingSubscriptionStore {
        let records = Mutex<[Int64: StandingSubscription]>([:])
        let nextID = Mutex<Int64>(1)
        let failure = Mutex<StateStoreFailure?>(nil)
        let delay: Duration

        init(delay: Duration = .zero) { self.delay = delay }

        func addSubscription(_ subscription: StandingSubscription) async throws(StateStoreFailure) -> StandingSubscription {
            try? await Task.sleep(for: delay)
            if let failure = failure.withLock({ $0 }) { throw failure }
            let id = nextID.withLock { id in
                defer { id += 1 }
                return id
            }
            let stored = StandingSubscription(
                id: id, adapter: subscription.adapter, address: subscription.address, service: subscription.service,
                characteristic: subscription.characteristic, mode: subscription.mode, created: subscription.created,
                owner: subscription.owner)
            records.withLock { $0[id] = stored }
            return stored
        }

        func removeSubscription(_ id: Int64) async throws(StateStoreFailure) -> Bool {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return records.withLock { $0.removeValue(forKey: id) != nil }
        }

        func subscriptions() async throws(StateStoreFailure) -> [StandingSubscription] {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return records.withLock { $0.values.sorted { $0.id < $1.id } }
        }
    }

    /// At most `limit` places per owner.
    typealias CountingQuota = PlaceCounter<Int64>

    /// The plug's relay, on `adapter`.
    func relay(adapter: String? = "hci0", mode: StandingSubscription.Mode = .notify) throws -> CreateSubscriptionCommand {
        let device = try DeviceTarget(parsing: CoreHarness.plug, adapter: adapter)
        return CreateSubscriptionCommand(
            characteristic: try CharacteristicTarget(device: device, parsing: CoreHarness.relay, service: nil), mode: mode)
    }

    @Test func aSubscriptionIsStoredCountedAndHeldOnceAndARemovalUndoesAll() async throws {
        let store = MemoryStore()
        let quota = CountingQuota(limit: 1)
        try await withCoreHarness(subscriptionStore: store, subscriptionQuota: quota) { harness in
            let created = try await harness.core.createSubscription(try relay(), owner: "alice")
            guard case .created(let subscription, let entry) = created else { throw CoreHarnessError("\(created)") }
            #expect(subscription.id == 1 && subscription.owner == "alice" && subscription.adapter == "hci0")
            #expect(subscription.characteristic == .uuid(CoreHarness.relay) && subscription.service == nil)
            #expect(entry.subscription == subscription)
            #expect(store.records.withLock { $0[1] } == subscription)
            #expect(quota.count("alice") == 1)
            #expect(harness.core.standing.entries.map(\.subscription.id) == [1])

            // The same characteristic again, from anyone: the one held, and
            // no place taken (alice's limit of one is not passed).
            let again = try await harness.core.createSubscription(try relay(), owner: "bob")
            guard case .existing(let existing) = again else { throw CoreHarnessError("\(again)") }
            #expect(existing.subscription.id == 1)
            #expect(quota.count("bob") == 0 && store.records.withLock { $0.count } == 1)
            // Another mode is another subscription, past alice's limit.
            let indications = try relay(mode: .indicate)
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.createSubscription(indications, owner: "alice")
            }
            guard case .limitReached(let limit)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(limit.detail == "alice holds 1")
            #expect(store.records.withLock { $0.count } == 1)

            try await harness.core.removeSubscription(RemoveSubscriptionCommand(id: 1))
            #expect(store.records.withLock { $0.isEmpty })
            #expect(quota.count("alice") == 0)
            #expect(harness.core.standing.entries.isEmpty)
            let twice = await failure { () async throws(GatewayCommandError) in
                try await harness.core.removeSubscription(RemoveSubscriptionCommand(id: 1))
            }
            guard case .notFound(let detail)? = twice else { throw CoreHarnessError("\(String(describing: twice))") }
            #expect(detail == "there is no standing subscription 1")
        }
    }

    @Test func aSubscriptionTheStoreCannotSaveIsNotHeldAndGivesItsPlaceBack() async throws {
        let store = MemoryStore()
        store.failure.withLock { $0 = StateStoreFailure(message: "the disk is full", diskFull: true) }
        let quota = CountingQuota(limit: 4)
        let command = try relay()
        try await withCoreHarness(subscriptionStore: store, subscriptionQuota: quota) { harness in
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.createSubscription(command, owner: "bob")
            }
            guard case .stateStore(let why)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(why.diskFull && why.message == "the disk is full")
            #expect(harness.core.standing.entries.isEmpty)
            #expect(quota.count("bob") == 0)
        }
    }

    @Test func aSubscriptionMadeWhileTheCoreStopsIsStoredAndSaysItWaits() async throws {
        let store = MemoryStore()
        try await withCoreHarness(subscriptionStore: store) { harness in
            harness.core.stop()
            let created = try await harness.core.createSubscription(try relay(), owner: "alice")
            guard case .created(let subscription, let entry) = created else { throw CoreHarnessError("\(created)") }
            #expect(store.records.withLock { $0[subscription.id] } == subscription)
            #expect(entry.subscription == subscription && entry.status == .waiting)
            #expect(entry.lastReason?.contains("stopping") == true)
            #expect(harness.core.standing.entries.isEmpty)
        }
    }

    @Test func withoutAStoreTheCoreNumbersSubscriptionsAndTheDefaultAdapterTakesThem() async throws {
        try await withCoreHarness(defaultAdapter: "hci0") { harness in
            let device = try DeviceTarget(parsing: CoreHarness.plug, adapter: nil)
            let byHandle = CreateSubscriptionCommand(
                characteristic: try CharacteristicTarget(device: device, parsing: "handle:0x0011", service: nil))
            let byService = CreateSubscriptionCommand(
                characteristic: try CharacteristicTarget(
                    device: device, parsing: CoreHarness.relay, service: "0000ff00-0000-1000-8000-00805f9b34fb"))
            guard case .created(let first, _) = try await harness.core.createSubscription(byHandle, owner: "local"),
                case .created(let second, _) = try await harness.core.createSubscription(byService, owner: "local")
            else { throw CoreHarnessError("not created") }
            #expect(first.id == 1 && first.characteristic == .handle(0x11) && first.service == nil)
            #expect(second.id == 2 && second.service == "0000ff00-0000-1000-8000-00805f9b34fb")
            #expect(first.adapter == "hci0" && second.adapter == "hci0")
            try await harness.core.removeSubscription(RemoveSubscriptionCommand(id: 2))
            #expect(harness.core.standing.entries.map(\.subscription.id) == [1])
        }
    }

    @Test func twoIdenticalCreationsAtOnceMakeOneSubscription() async throws {
        let store = MemoryStore(delay: .milliseconds(200))
        try await withCoreHarness(subscriptionStore: store) { harness in
            let command = try relay()
            async let first = harness.core.createSubscription(command, owner: "alice")
            async let second = harness.core.createSubscription(command, owner: "bob")
            let outcomes = try await [first, second]
            let created = outcomes.filter { if case .created = $0 { true } else { false } }
            #expect(created.count == 1)
            #expect(store.records.withLock { $0.count } == 1)
            #expect(harness.core.standing.entries.count == 1)
        }
    }
}
