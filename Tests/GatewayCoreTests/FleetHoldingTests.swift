import BlueZ
import GatewayCore
import PersistedState
import TestSupport
import Testing

/// Holding devices for the fleet through the core, on the simulator: kept
/// and subscribed as a device kept here is, but nothing stored nor counted.
@Suite struct FleetHoldingTests {
    typealias KeptStore = KeepCommandTests.MemoryStore
    typealias SubscriptionStore = SubscriptionCommandTests.MemoryStore

    @Test func aHoldKeepsAndSubscribesWithNothingStoredAndAReleaseDisconnects() async throws {
        let keptStore = KeptStore()
        let subscriptionStore = SubscriptionStore()
        let keptQuota = PlaceCounter<AdapterDevice>(limit: 0)
        let subscriptionQuota = PlaceCounter<Int64>(limit: 0)
        try await withCoreHarness(
            keptStore: keptStore, keptQuota: keptQuota, subscriptionStore: subscriptionStore,
            subscriptionQuota: subscriptionQuota
        ) { harness in
            let device = try await harness.connected(CoreHarness.plug)
            let wish = FleetKeep(
                address: CoreHarness.plug, subscriptions: [FleetKeep.Subscription(characteristic: CoreHarness.relay)],
                maxAttempts: 4, label: "boiler")
            let hold = try harness.core.holdForFleet(HoldForFleetCommand(wish: wish))
            // No pin, no default adapter: the one that hears it.
            #expect(hold.adapter == "hci0")
            #expect(hold.subscriptionIDs.count == 1 && hold.subscriptionIDs.allSatisfy { $0 < 0 })
            #expect(harness.core.fleetHeldDevices() == [device.address])
            let kept = harness.core.fleetHoldStatus(device.address)
            #expect(kept?.label == "boiler" && kept?.adapter == "hci0")

            // Held as a standing subscription of the fleet's, and active
            // on the connected device.
            let id = try #require(hold.subscriptionIDs.first)
            let entry = try #require(harness.core.standing.entry(id))
            #expect(entry.subscription.owner == FleetHold.owner)
            #expect(entry.subscription.characteristic == .uuid(CoreHarness.relay))
            #expect(await waitForCondition(timeout: .seconds(10)) { harness.core.standing.entry(id)?.status == .active })
            let link = harness.core.fleetHoldLink(device.address)
            #expect(link?.isUp == true && link?.adapterOn == true)

            // Nothing stored, no client's place taken (the limits are 0).
            #expect(keptStore.records.withLock { $0.isEmpty })
            #expect(subscriptionStore.records.withLock { $0.isEmpty })
            #expect(keptQuota.count("fleet") == 0 && subscriptionQuota.count("fleet") == 0)

            // Holding it again changes nothing.
            #expect(try harness.core.holdForFleet(HoldForFleetCommand(wish: wish)) == hold)
            #expect(harness.core.standing.entries.count == 1)

            #expect(await harness.core.releaseFleetHold(ReleaseFleetHoldCommand(device: device.address)))
            #expect(harness.core.fleetHeldDevices().isEmpty)
            #expect(harness.core.standing.entries.isEmpty)
            #expect(harness.core.keeper.keptDevices().isEmpty)
            #expect(harness.core.fleetHoldStatus(device.address) == nil)
            #expect(harness.core.fleetHoldLink(device.address) == nil)
            #expect(try harness.central.device(device.address, adapter: "hci0").connected == false)
            #expect(await !harness.core.releaseFleetHold(ReleaseFleetHoldCommand(device: device.address)))
        }
    }

    @Test func thePinnedAdapterComesFirstThenTheDefaultOne() async throws {
        try await withCoreHarness(defaultAdapter: "hci3") { harness in
            let pinned = try harness.core.holdForFleet(
                HoldForFleetCommand(wish: FleetKeep(address: CoreHarness.plug, pin: "hall/hci7")))
            #expect(pinned.adapter == "hci7")
            let other = "C4:7C:8D:6A:3E:01"
            let byDefault = try harness.core.holdForFleet(HoldForFleetCommand(wish: FleetKeep(address: other, pin: "hall")))
            #expect(byDefault.adapter == "hci3")
            #expect(Set(harness.core.keeper.keptDevices().map(\.adapter)) == ["hci3", "hci7"])
        }
    }

    @Test func aWishThisGatewayCannotReadIsRefusedOrHeldAsWritten() async throws {
        try await withCoreHarness { harness in
            let refused = await failure { () async throws(GatewayCommandError) in
                _ = try harness.core.holdForFleet(HoldForFleetCommand(wish: FleetKeep(address: "not an address")))
            }
            guard case .invalidParameter(let name, _)? = refused else { throw CoreHarnessError("\(String(describing: refused))") }
            #expect(name == "address")

            let wish = FleetKeep(
                address: CoreHarness.plug,
                subscriptions: [
                    FleetKeep.Subscription(characteristic: "handle:0x0011"),
                    FleetKeep.Subscription(characteristic: "relay"),
                ])
            let hold = try harness.core.holdForFleet(HoldForFleetCommand(wish: wish))
            let entries = hold.subscriptionIDs.compactMap(harness.core.standing.entry)
            #expect(entries.map(\.subscription.characteristic) == [.handle(0x11), .uuid("relay")])
            #expect(await waitForCondition(timeout: .seconds(10)) { harness.core.standing.entry(hold.subscriptionIDs[1])?.lastReason != nil })
            #expect(harness.core.standing.entry(hold.subscriptionIDs[1])?.lastReason == "the stored subscription cannot be read")
        }
    }
}
