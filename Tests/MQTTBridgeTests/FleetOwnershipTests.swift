import Testing

@testable import MQTTBridge

/// Who holds a fleet-kept device, from the take, hold and release messages
/// in the broker's order: every gateway that sees the same sequence agrees.
struct FleetOwnershipTests {
    static let device = "C4:7C:8D:6A:3E:01"

    @Test func theFirstTakeOfAnEpochWinsAndTheSecondIsStale() {
        var ownership = FleetOwnership()
        let online: (String) -> Bool = { _ in true }
        #expect(ownership.apply(.take, by: "a", epoch: 1, device: Self.device, isOnline: online)?.owner == "a")
        #expect(ownership.apply(.take, by: "b", epoch: 1, device: Self.device, isOnline: online) == nil)
        // A take of the next epoch while the holder is online: refused.
        #expect(ownership.apply(.take, by: "b", epoch: 2, device: Self.device, isOnline: online) == nil)
        #expect(ownership.record(Self.device) == FleetOwnership.Record(owner: "a", epoch: 1))
    }

    @Test func aReleaseFreesTheDeviceForTheNextEpochOnly() {
        var ownership = FleetOwnership()
        let online: (String) -> Bool = { _ in true }
        _ = ownership.apply(.take, by: "a", epoch: 1, device: Self.device, isOnline: online)
        // Someone else's release, or a stale one, changes nothing.
        #expect(ownership.apply(.release, by: "b", epoch: 1, device: Self.device, isOnline: online) == nil)
        let released = ownership.apply(.release, by: "a", epoch: 1, failed: true, device: Self.device, isOnline: online)
        #expect(released == FleetOwnership.Record(owner: nil, epoch: 1, failed: true))
        #expect(ownership.apply(.take, by: "b", epoch: 1, device: Self.device, isOnline: online) == nil)
        #expect(ownership.apply(.take, by: "b", epoch: 2, device: Self.device, isOnline: online)?.owner == "b")
    }

    @Test func anOfflineHoldersDeviceMayBeTakenAndItsLateHoldIsIgnored() {
        var ownership = FleetOwnership()
        var online: Set<String> = ["a", "b"]
        _ = ownership.apply(.take, by: "a", epoch: 1, device: Self.device, isOnline: { online.contains($0) })
        online.remove("a")
        #expect(ownership.apply(.take, by: "b", epoch: 2, device: Self.device, isOnline: { online.contains($0) })?.owner == "b")
        // The old holder's hold, sent again after it reconnects: stale.
        online.insert("a")
        #expect(ownership.apply(.hold, by: "a", epoch: 1, device: Self.device, isOnline: { online.contains($0) }) == nil)
        #expect(ownership.record(Self.device).owner == "b")
    }

    @Test func aGatewayThatMissedTheTakeLearnsFromTheHold() {
        var late = FleetOwnership()
        // It starts with the retained hold of epoch 3.
        #expect(late.apply(.hold, by: "c", epoch: 3, device: Self.device, isOnline: { _ in true })?.owner == "c")
        // A higher epoch only exists when a take was accepted: adopted.
        #expect(late.apply(.hold, by: "a", epoch: 5, device: Self.device, isOnline: { _ in true })?.owner == "a")
        #expect(late.apply(.release, by: "a", epoch: 5, device: Self.device, isOnline: { _ in true })?.owner == nil)
        #expect(late.apply(.take, by: "b", epoch: 6, device: Self.device, isOnline: { _ in true })?.owner == "b")
    }
}
