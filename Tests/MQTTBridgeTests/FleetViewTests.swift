import Testing

@testable import MQTTBridge

/// The fleet's ranking and claim rules, from the messages a gateway saw.
struct FleetViewTests {
    static let device = "C4:7C:8D:6A:3E:01"

    func view(_ online: [String]) -> FleetView {
        var view = FleetView(presenceFreshness: .seconds(60), holdTime: .seconds(30))
        for id in online { view.setStatus(id, online: true) }
        return view
    }

    @Test func connectedFirstThenStrongestThenTheRestByID() {
        let now = ContinuousClock.now
        var view = view(["c", "b", "a", "d"])
        view.setPresence("b", device: Self.device, rssi: -70, now: now)
        view.setPresence("c", device: Self.device, rssi: -50, now: now)
        #expect(view.ranking(for: Self.device, now: now) == ["c", "b", "a", "d"])
        view.setConnected("d", device: Self.device, true)
        #expect(view.ranking(for: Self.device, now: now) == ["d", "c", "b", "a"])
        view.setConnected("d", device: Self.device, false)
        // Equal signal: the smaller id first.
        view.setPresence("a", device: Self.device, rssi: -50, now: now)
        #expect(view.ranking(for: Self.device, now: now) == ["a", "c", "b", "d"])
        #expect(view.ranking(for: nil, now: now) == ["a", "b", "c", "d"])
    }

    @Test func theInformedAreThoseThatKnowTheDevice() {
        let now = ContinuousClock.now
        var view = view(["a", "b", "c"])
        #expect(view.informedCount(for: Self.device, now: now) == 0)
        view.setPresence("b", device: Self.device, rssi: -70, now: now)
        #expect(view.informedCount(for: Self.device, now: now) == 1)
        view.setConnected("c", device: Self.device, true)
        #expect(view.informedCount(for: Self.device, now: now) == 2)
        #expect(view.ranking(for: Self.device, now: now) == ["c", "b", "a"])
        // A stale presence informs no one.
        #expect(view.informedCount(for: Self.device, now: now + .seconds(61)) == 1)
        #expect(view.informedCount(for: nil, now: now) == 0)
    }

    @Test func offlineGatewaysAndStalePresenceDoNotCount() {
        let then = ContinuousClock.now
        var view = view(["a", "b", "c"])
        view.setPresence("a", device: Self.device, rssi: -40, now: then)
        view.setPresence("b", device: Self.device, rssi: -60, now: then + .seconds(50))
        view.setConnected("c", device: Self.device, true)
        view.setStatus("c", online: false)
        #expect(view.ranking(for: Self.device, now: then + .seconds(70)) == ["b", "a"])
        view.setPresence("b", device: Self.device, rssi: nil, now: then + .seconds(71))
        #expect(view.ranking(for: Self.device, now: then + .seconds(71)) == ["a", "b"])
    }

    @Test func theFirstClaimWinsAndHoldsTheDevice() {
        let now = ContinuousClock.now
        var view = view(["a", "b"])
        view.setPresence("a", device: Self.device, rssi: -40, now: now)
        #expect(view.claim("r1", by: "b", device: Self.device, now: now) == "b")
        #expect(view.claim("r1", by: "a", device: Self.device, now: now) == "b")
        // The winner goes first for the device's next requests for a while.
        #expect(view.ranking(for: Self.device, now: now + .seconds(1)) == ["b", "a"])
        #expect(view.ranking(for: Self.device, now: now + .seconds(31)) == ["a", "b"])
    }

    @Test func aWinnerThatGoesOfflineBeforeDoneReopensItsRequests() {
        let now = ContinuousClock.now
        var view = view(["a", "b"])
        _ = view.claim("open", by: "a", device: Self.device, now: now)
        _ = view.claim("finished", by: "a", device: Self.device, now: now)
        view.finish("finished", now: now)
        view.setStatus("a", online: false)
        #expect(view.reopen(wonBy: "a") == ["open"])
        #expect(view.winner(of: "open") == nil)
        #expect(view.claim("open", by: "b", device: Self.device, now: now) == "b")
        // A finished request takes no new claim.
        #expect(view.claim("finished", by: "b", device: Self.device, now: now) == "a")
        #expect(view.isFinished("finished"))
        #expect(view.expire(olderThan: .seconds(300), now: now + .seconds(301)).sorted() == ["finished", "open"])
    }
}
