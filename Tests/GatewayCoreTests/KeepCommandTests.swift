import BlueZ
import GatewayCore
import JSONValue
import PersistedState
import Synchronization
import Testing

/// Keeping and releasing through the core, on the simulator, with a store,
/// a quota and a fleet that record what the core asks of them.
@Suite struct KeepCommandTests {
    /// Kept devices held in memory, in the order stored; fails every change
    /// while `failure` is set.
    final class MemoryStore: KeptDeviceStore {
        let records = Mutex<[AdapterDevice: (options: KeptDeviceOptions, owner: String)]>([:])
        let failure = Mutex<StateStoreFailure?>(nil)

        func storeKept(_ key: AdapterDevice, options: KeptDeviceOptions, owner: String) async throws(StateStoreFailure) {
            if let failure = failure.withLock({ $0 }) { throw failure }
            records.withLock { $0[key] = (options, owner) }
        }

        func removeKept(_ key: AdapterDevice) async throws(StateStoreFailure) -> Bool {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return records.withLock { $0.removeValue(forKey: key) != nil }
        }

        func keptDevices() async throws(StateStoreFailure) -> [KeptConnection] {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return records.withLock { records in
                records.map { key, record in
                    KeptConnection(
                        adapter: key.adapter, address: key.address.description, options: record.options.stored,
                        owner: record.owner)
                }
            }
        }
    }

    /// At most `limit` places per owner.
    typealias CountingQuota = PlaceCounter<AdapterDevice>

    /// The fleet's wishes, as a broker would retain them.
    final class WishList: FleetKeeping {
        let wishes = Mutex<[String: FleetKeep]>([:])

        func keep(_ wish: FleetKeep) async throws(GatewayCommandError) { wishes.withLock { $0[wish.address] = wish } }
        func unkeep(_ address: BluetoothAddress) async throws(GatewayCommandError) -> Bool {
            wishes.withLock { $0.removeValue(forKey: address.description) != nil }
        }
    }

    let plug = try? DeviceTarget(parsing: CoreHarness.plug, adapter: "hci0")

    @Test func aKeepIsStoredAndCountedThenKeptAndAnUnkeepUndoesAll() async throws {
        let store = MemoryStore()
        let quota = CountingQuota(limit: 1)
        try await withCoreHarness(keptStore: store, keptQuota: quota) { harness in
            let device = try #require(plug)
            let key = AdapterDevice(adapter: "hci0", address: device.address)
            let first = try await harness.core.keep(
                KeepCommand(device: device, placement: .thisGateway(maxAttempts: 3, label: "pump")), owner: "alice")
            guard case .kept(let kept, let isNew) = first else { throw CoreHarnessError("\(first)") }
            #expect(isNew)
            #expect(kept?.address == device.address && kept?.adapter == "hci0")
            #expect(store.records.withLock { $0[key]?.owner } == "alice")
            #expect(store.records.withLock { $0[key]?.options } == KeptDeviceOptions(maxAttempts: 3, label: "pump"))
            #expect(quota.holds(key) && quota.count("alice") == 1)

            // New options for a kept device: stored again, no new place (the
            // limit of one is not passed), not new to the keeper.
            let again = try await harness.core.keep(
                KeepCommand(device: device, placement: .thisGateway(maxAttempts: nil, label: "relay")), owner: "alice")
            guard case .kept(_, let isNewAgain) = again else { throw CoreHarnessError("\(again)") }
            #expect(!isNewAgain)
            #expect(store.records.withLock { $0[key]?.options } == KeptDeviceOptions(label: "relay"))
            #expect(quota.count("alice") == 1)
            #expect(try harness.core.keepStatus(KeepStatusCommand(device: device)).label == "relay")

            try await harness.core.unkeep(UnkeepCommand(device: device))
            #expect(store.records.withLock { $0.isEmpty })
            #expect(!quota.holds(key) && quota.count("alice") == 0)
            #expect(harness.core.keeper.keptDevices().isEmpty)
            let twice = await failure { () async throws(GatewayCommandError) in
                try await harness.core.unkeep(UnkeepCommand(device: device))
            }
            guard case .notFound(let detail)? = twice else { throw CoreHarnessError("\(String(describing: twice))") }
            #expect(detail == "\(device.address) on hci0 is not kept connected")
        }
    }

    @Test func aKeepTheStoreCannotSaveKeepsNothingAndGivesItsPlaceBack() async throws {
        let store = MemoryStore()
        store.failure.withLock { $0 = StateStoreFailure(message: "the disk is full", diskFull: true) }
        let quota = CountingQuota(limit: 4)
        try await withCoreHarness(keptStore: store, keptQuota: quota) { harness in
            let device = try #require(plug)
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.keep(
                    KeepCommand(device: device, placement: .thisGateway(maxAttempts: nil, label: nil)), owner: "bob")
            }
            guard case .stateStore(let why)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(why.diskFull && why.message == "the disk is full")
            #expect(harness.core.keeper.keptDevices().isEmpty)
            #expect(quota.count("bob") == 0)
        }
    }

    @Test func aKeepPastTheLimitStoresNothing() async throws {
        let store = MemoryStore()
        let quota = CountingQuota(limit: 0)
        try await withCoreHarness(keptStore: store, keptQuota: quota) { harness in
            let device = try #require(plug)
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.keep(
                    KeepCommand(device: device, placement: .thisGateway(maxAttempts: nil, label: nil)), owner: "carol")
            }
            guard case .limitReached(let limit)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(limit.scope == .client && limit.detail == "carol holds 0")
            #expect(store.records.withLock { $0.isEmpty })
            #expect(harness.core.keeper.keptDevices().isEmpty)
        }
    }

    @Test func theFleetsKeepGoesToTheFleetOnceTheGatewayIsInOne() async throws {
        try await withCoreHarness { harness in
            let device = try #require(plug)
            let wish = FleetKeep(address: device.address.description, pin: "hall")
            let command = KeepCommand(device: device, placement: .fleet(wish))
            let alone = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.keep(command, owner: "local")
            }
            guard case .notFound(let detail)? = alone else { throw CoreHarnessError("\(String(describing: alone))") }
            #expect(detail.contains("not in a fleet"))

            let fleet = WishList()
            harness.core.attachFleet(fleet)
            let outcome = try await harness.core.keep(command, owner: "local")
            guard case .keptByFleet(let published) = outcome else { throw CoreHarnessError("\(outcome)") }
            #expect(published == wish)
            #expect(fleet.wishes.withLock { $0[wish.address] } == wish)
            // Not kept on this gateway.
            #expect(harness.core.keeper.keptDevices().isEmpty)

            try await harness.core.unkeep(UnkeepCommand(device: device, fleet: true))
            #expect(fleet.wishes.withLock { $0.isEmpty })
            let again = await failure { () async throws(GatewayCommandError) in
                try await harness.core.unkeep(UnkeepCommand(device: device, fleet: true))
            }
            guard case .notFound(let gone)? = again else { throw CoreHarnessError("\(String(describing: again))") }
            #expect(gone == "the fleet does not keep \(device.address)")
        }
    }

    @Test func storedOptionsReadBackAndAnythingElseReadsAsNone() {
        let options = KeptDeviceOptions(maxAttempts: 5, label: "boiler \"east\"")
        #expect(String(decoding: options.stored, as: UTF8.self) == #"{"max_attempts":5,"label":"boiler \"east\""}"#)
        #expect(KeptDeviceOptions(stored: options.stored) == options)
        #expect(KeptDeviceOptions().stored == Array("{}".utf8))
        #expect(KeptDeviceOptions(stored: Array("not json".utf8)) == KeptDeviceOptions())
        #expect(KeptDeviceOptions(stored: Array(#"{"max_attempts":"5","label":7}"#.utf8)) == KeptDeviceOptions())
    }
}
