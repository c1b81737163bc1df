#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import GatewayCore
import PersistedState
import Testing

/// Start-up through the core: what the stores held from the last run is
/// kept, held and counted again, whatever the limits.
@Suite struct RestorationTests {
    /// What the state store held when the gateway stopped.
    struct Stored: KeptDeviceStore, StandingSubscriptionStore {
        var kept: [KeptConnection] = []
        var standing: [StandingSubscription] = []
        var failure: StateStoreFailure?

        func storeKept(_ key: AdapterDevice, options: KeptDeviceOptions, owner: String) async throws(StateStoreFailure) {}
        func removeKept(_ key: AdapterDevice) async throws(StateStoreFailure) -> Bool { false }
        func keptDevices() async throws(StateStoreFailure) -> [KeptConnection] {
            if let failure { throw failure }
            return kept
        }

        func addSubscription(_ subscription: StandingSubscription) async throws(StateStoreFailure) -> StandingSubscription {
            subscription
        }
        func removeSubscription(_ id: Int64) async throws(StateStoreFailure) -> Bool { false }
        func subscriptions() async throws(StateStoreFailure) -> [StandingSubscription] { standing }
    }

    @Test func keptDevicesAndSubscriptionsAreTakenUpAgainAndCountedPastTheLimits() async throws {
        let stored = Stored(
            kept: [
                KeptConnection(
                    adapter: "hci0", address: CoreHarness.plug, options: KeptDeviceOptions(maxAttempts: 7, label: "pump").stored,
                    owner: "alice"),
                KeptConnection(adapter: "hci0", address: "pump", owner: "alice"),
            ],
            standing: [
                StandingSubscription(
                    id: 12, adapter: "hci0", address: CoreHarness.plug, characteristic: .uuid(CoreHarness.relay), mode: .notify,
                    created: Date(), owner: nil)
            ])
        let kept = PlaceCounter<AdapterDevice>(limit: 0)
        let subscriptions = PlaceCounter<Int64>(limit: 0)
        try await withCoreHarness(
            keptStore: stored, keptQuota: kept, subscriptionStore: stored, subscriptionQuota: subscriptions
        ) { harness in
            let restored = try await harness.core.restore()
            #expect(restored.keptDevices == 1 && restored.subscriptions == 1)
            #expect(restored.unreadableAddresses == ["pump"])
            let device = try #require(harness.core.keeper.keptDevices().first)
            #expect(harness.core.keeper.keptDevices().count == 1)
            #expect(device.address.description == CoreHarness.plug && device.adapter == "hci0")
            #expect(device.label == "pump")
            #expect(kept.count("alice") == 1)
            #expect(subscriptions.count("unrecorded") == 1)
            #expect(harness.core.standing.entries.map(\.subscription.id) == [12])
        }
    }

    @Test func aStoreThatCannotBeReadRestoresNothing() async throws {
        let stored = Stored(failure: StateStoreFailure(message: "state.db is not a database", diskFull: false))
        try await withCoreHarness(keptStore: stored, subscriptionStore: stored) { harness in
            do throws(StateStoreFailure) {
                _ = try await harness.core.restore()
                Issue.record("the store was read")
            } catch {
                #expect(error.message == "state.db is not a database")
            }
            #expect(harness.core.keeper.keptDevices().isEmpty && harness.core.standing.entries.isEmpty)
        }
    }
}
