import BlueZ
import BlueZSimulator
import GatewayCore
import PersistedState
import Synchronization
import Testing

/// The peripheral role through the core, on the simulator: applications
/// and advertisements published, stored and counted, values set and
/// stored, withdrawn, and taken up again at start-up.
@Suite struct PeripheralCommandTests {
    /// Publications held in memory; fails every change while `failure` is
    /// set. Gives back what it holds as `stored` says (tests set it).
    final class MemoryStore: PublicationStore {
        let items = Mutex<[String: PublishedItem]>([:])
        let failure = Mutex<StateStoreFailure?>(nil)
        let stored = Mutex<[StoredPublication]>([])

        func savePublication(_ item: PublishedItem) async throws(StateStoreFailure) {
            if let failure = failure.withLock({ $0 }) { throw failure }
            items.withLock { $0["\(item.kind.rawValue) \(item.id)"] = item }
        }

        func removePublication(_ kind: PublishedItem.Kind, id: String) async throws(StateStoreFailure) -> Bool {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return items.withLock { $0.removeValue(forKey: "\(kind.rawValue) \(id)") != nil }
        }

        func setPublishedValue(_ value: [UInt8], characteristic: Int, application: String) async throws(StateStoreFailure) {
            if let failure = failure.withLock({ $0 }) { throw failure }
            items.withLock { $0["application \(application)"]?.values[characteristic] = value }
        }

        func publications() async throws(StateStoreFailure) -> [StoredPublication] { stored.withLock { $0 } }
    }

    /// A sensor with one readable, notifying characteristic (`ff01`).
    static let sensor = GATTApplication(
        services: [
            GATTApplication.Service(
                uuid: BluetoothUUID(uuid16: 0xFF00),
                characteristics: [
                    GATTApplication.Characteristic(uuid: BluetoothUUID(uuid16: 0xFF01), flags: ["read", "notify"], value: [0xCA])
                ])
        ], label: "sensor")
    static let definition = Array(#"{"label":"sensor"}"#.utf8)

    @Test func anApplicationIsPublishedStoredCountedItsValueStoredAndAWithdrawalUndoesAll() async throws {
        let store = MemoryStore()
        let quota = PlaceCounter<String>(limit: 1)
        try await withCoreHarness(publications: PublicationHarness(store: store, applicationQuota: quota)) { harness in
            let published = try await harness.core.publish(
                PublishApplicationCommand(application: Self.sensor, adapter: "hci0", stored: Self.definition), owner: "alice")
            #expect(published.adapter == "hci0" && published.definition.label == "sensor")
            let item = try #require(store.items.withLock { $0["application \(published.id)"] })
            #expect(item.definition == Self.definition && item.owner == "alice" && item.adapter == "hci0")
            #expect(quota.holds(published.id) && quota.count("alice") == 1)
            #expect(harness.core.publishedApplications().map(\.id) == [published.id])
            #expect(await harness.simulator.registeredApplications().count == 1)

            // The limit of one is reached.
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.publish(
                    PublishApplicationCommand(application: Self.sensor, adapter: "hci0", stored: Self.definition),
                    owner: "alice")
            }
            guard case .limitReached? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(harness.core.publishedApplications().count == 1)

            let characteristic = LocalCharacteristic(application: published.id, uuid: BluetoothUUID(uuid16: 0xFF01))
            #expect(try harness.core.localValue(characteristic) == [0xCA])
            let notified = try await harness.core.setLocalValue(SetLocalValueCommand(characteristic: characteristic, value: [0xFE]))
            #expect(!notified)
            #expect(try harness.core.localValue(characteristic) == [0xFE])
            #expect(store.items.withLock { $0["application \(published.id)"]?.values } == [0: [0xFE]])
            let ff01 = try #require(GATTUUID("ff01"))
            #expect(try await harness.simulator.centralRead(adapter: "hci0", characteristic: ff01) == [0xFE])

            try await harness.core.withdraw(WithdrawCommand(.application, id: published.id))
            #expect(store.items.withLock { $0.isEmpty })
            #expect(quota.count("alice") == 0)
            #expect(harness.core.publishedApplications().isEmpty)
            #expect(await harness.simulator.registeredApplications().isEmpty)
            let twice = await bluezFailure { () async throws(GatewayCommandError) in
                try await harness.core.withdraw(WithdrawCommand(.application, id: published.id))
            }
            #expect(twice?.code == .notFound)
        }
    }

    @Test func aPublicationTheStoreCannotSaveIsWithdrawnAndGivesItsPlaceBack() async throws {
        let store = MemoryStore()
        store.failure.withLock { $0 = StateStoreFailure(message: "the disk is full", diskFull: true) }
        let quota = PlaceCounter<String>(limit: 4)
        try await withCoreHarness(publications: PublicationHarness(store: store, advertisementQuota: quota)) { harness in
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try await harness.core.advertise(
                    AdvertiseCommand(advertisement: Advertisement(localName: "hall"), adapter: "hci0", stored: []), owner: "bob")
            }
            guard case .stateStore(let why)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(why.diskFull)
            #expect(harness.core.publishedAdvertisements().isEmpty)
            #expect(await harness.simulator.registeredAdvertisements().isEmpty)
            #expect(quota.count("bob") == 0)
        }
    }

    @Test func anAdvertisementTooLongForTheAirIsBlueZsRefusalAndTakesNoPlace() async throws {
        let quota = PlaceCounter<String>(limit: 4)
        try await withCoreHarness(publications: PublicationHarness(advertisementQuota: quota)) { harness in
            let name = String(repeating: "n", count: 40)
            let refused = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.advertise(
                    AdvertiseCommand(advertisement: Advertisement(localName: name), adapter: "hci0", stored: []), owner: "bob")
            }
            #expect(refused?.dbusName == Advertisement.tooLongErrorName)
            #expect(quota.count("bob") == 0)
        }
    }

    @Test func whatTheStoreHeldIsPublishedAgainWithItsValuesAndCountedPastTheLimits() async throws {
        let store = MemoryStore()
        store.stored.withLock {
            $0 = [
                StoredPublication(
                    kind: .application, id: "app7", adapter: "hci0", definition: .application(Self.sensor),
                    values: [0: [0x42]], owner: "alice"),
                StoredPublication(
                    kind: .advertisement, id: "adv3", adapter: "hci0",
                    definition: .advertisement(Advertisement(localName: "hall")), owner: nil),
                StoredPublication(
                    kind: .application, id: "app8", adapter: "hci0", definition: .unreadable("services: is required"),
                    owner: "alice"),
            ]
        }
        let applications = PlaceCounter<String>(limit: 0)
        let advertisements = PlaceCounter<String>(limit: 0)
        let publications = PublicationHarness(
            store: store, applicationQuota: applications, advertisementQuota: advertisements)
        try await withCoreHarness(publications: publications) { harness in
            let restored = try await harness.core.restore()
            #expect(restored.applications == 1 && restored.advertisements == 1)
            #expect(restored.unreadablePublications.map(\.id) == ["app8"])
            #expect(restored.unreadablePublications.first?.reason == "services: is required")
            #expect(restored.unregisteredPublications.isEmpty)
            #expect(harness.core.publishedApplications().map(\.id) == ["app7"])
            #expect(harness.core.publishedAdvertisements().map(\.id) == ["adv3"])
            let characteristic = LocalCharacteristic(application: "app7", uuid: BluetoothUUID(uuid16: 0xFF01))
            #expect(try harness.core.localValue(characteristic) == [0x42])
            #expect(applications.count("alice") == 1 && advertisements.count("unrecorded") == 1)
        }
    }

    @Test func storedIdsAndAdaptersTheGatewayWouldNotGiveAreSkippedNotPublished() async throws {
        let store = MemoryStore()
        store.stored.withLock {
            $0 = [
                StoredPublication(
                    kind: .application, id: "app-7", adapter: "hci0", definition: .application(Self.sensor),
                    values: [:], owner: "alice"),
                StoredPublication(
                    kind: .advertisement, id: "adv3", adapter: "hci0/x y",
                    definition: .advertisement(Advertisement(localName: "hall")), owner: nil),
                StoredPublication(
                    kind: .application, id: "app9", adapter: "hci0", definition: .application(Self.sensor),
                    values: [:], owner: "alice"),
            ]
        }
        let applications = PlaceCounter<String>(limit: 4)
        try await withCoreHarness(publications: PublicationHarness(store: store, applicationQuota: applications)) { harness in
            let restored = try await harness.core.restore()
            #expect(restored.unreadablePublications.map(\.id) == ["app-7", "adv3"])
            #expect(restored.unreadablePublications.first?.reason.contains("not an id the gateway gives") == true)
            #expect(restored.unreadablePublications.last?.reason.contains("not an adapter name") == true)
            #expect(restored.applications == 1 && restored.advertisements == 0)
            #expect(harness.core.publishedApplications().map(\.id) == ["app9"])
            #expect(harness.core.publishedAdvertisements().isEmpty)
            #expect(applications.count("alice") == 1)
        }
    }
}
