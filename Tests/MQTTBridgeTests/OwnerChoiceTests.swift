import Testing

@testable import MQTTBridge

/// Choosing the holder: signal with a margin, pin, prefer, penalties, slots.
struct OwnerChoiceTests {
    func choice(
        _ hearings: [(String, Double)], online: Set<String> = ["a", "b", "c"], penalized: Set<String> = [],
        full: Set<String> = [], pin: String? = nil, prefer: String? = nil
    ) -> OwnerChoice {
        OwnerChoice(
            hearings: hearings.map { OwnerChoice.Hearing(gateway: $0.0, average: $0.1) }, online: online,
            penalized: penalized, full: full, pin: pin, prefer: prefer, margin: 16)
    }

    @Test func theStrongestAverageFirstPenalizedLast() {
        #expect(choice([("a", -70), ("b", -50), ("c", -60)]).candidates() == ["b", "c", "a"])
        #expect(choice([("a", -70), ("b", -50)], penalized: ["b"]).candidates() == ["a", "b"])
        // Nobody hears it: every online gateway, by id.
        #expect(choice([]).candidates() == ["a", "b", "c"])
        #expect(choice([("a", -70), ("b", -50)], online: ["a"]).candidates() == ["a"])
    }

    @Test func aChallengerMustBeatTheHolderByTheMargin() {
        #expect(choice([("a", -60), ("b", -45)]).challenger(of: "a") == nil)
        #expect(choice([("a", -60), ("b", -44)]).challenger(of: "a") == "b")
        #expect(choice([("a", -60), ("b", -40)], penalized: ["b"]).challenger(of: "a") == nil)
        // A holder that no longer hears it is not challenged by signal (it
        // gives the device up when it has lost it, not before).
        #expect(choice([("b", -40)]).challenger(of: "a") == nil)
    }

    @Test func aHolderThatLostTheDeviceGivesItEvenToAPenalizedGateway() {
        // b's attempts fail: it passes over a, which gave the device up lately.
        #expect(choice([("a", -50)], penalized: ["a"]).someoneElseHears(besides: "b") == false)
        // b has lost it altogether: a, which hears it, will do.
        #expect(choice([("a", -50)], penalized: ["a"]).someoneElseHears(besides: "b", evenPenalized: true))
        #expect(choice([("a", -50)], penalized: ["a"], pin: "b").someoneElseHears(besides: "b", evenPenalized: true) == false)
        #expect(choice([], penalized: ["a"]).someoneElseHears(besides: "b", evenPenalized: true) == false)
    }

    @Test func pinAndPreferOverrideTheSignal() {
        #expect(choice([("a", -40), ("b", -80)], pin: "b").candidates() == ["b"])
        #expect(choice([("a", -40), ("b", -80)], pin: "b").challenger(of: "a") == "b")
        #expect(choice([("a", -80), ("b", -40)], pin: "a").challenger(of: "a") == nil)
        #expect(choice([("a", -80), ("b", -40)], pin: "a").someoneElseHears(besides: "a") == false)
        #expect(choice([("a", -40), ("b", -80)], prefer: "b").candidates() == ["b", "a"])
        #expect(choice([("a", -40), ("b", -80)], prefer: "b").challenger(of: "a") == "b")
        #expect(choice([("a", -80), ("b", -40)], prefer: "a").challenger(of: "a") == nil)
        // A preferred gateway that does not hear the device: the signal decides.
        #expect(choice([("a", -40), ("c", -80)], prefer: "b").candidates() == ["a", "c"])
    }

    @Test func aGatewayWithNoFreeSlotIsNeverHandedTheDevice() {
        // Last in the order, after penalized ones.
        #expect(choice([("a", -70), ("b", -50), ("c", -60)], full: ["b"]).candidates() == ["c", "a", "b"])
        #expect(choice([("a", -70), ("b", -50)], penalized: ["a"], full: ["b"]).candidates() == ["a", "b"])
        // Far better, but full: the holder keeps it (no hand-over it could not take).
        #expect(choice([("a", -80), ("b", -40)], full: ["b"]).challenger(of: "a") == nil)
        #expect(choice([("a", -80), ("b", -40), ("c", -50)], full: ["b"]).challenger(of: "a") == "c")
        #expect(choice([("a", -80), ("b", -40)], full: ["b"], prefer: "b").challenger(of: "a") == nil)
        #expect(choice([("a", -80), ("b", -40)], full: ["b"], prefer: "b").candidates() == ["a", "b"])
        // A holder that lost it has nobody to give it to when the only other hearer is full.
        #expect(choice([("b", -40)], full: ["b"]).someoneElseHears(besides: "a", evenPenalized: true) == false)
        // A pin is the user's word: the pinned gateway gets it, full or not (it connects once a slot frees).
        #expect(choice([("a", -80), ("b", -40)], full: ["b"], pin: "b").challenger(of: "a") == "b")
    }
}
