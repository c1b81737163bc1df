@testable import AsyncPrimitives
import Testing

/// `LaneTable` against the rule it keeps, written the plain way: every
/// decision a walk of all waiters in arrival order.
private struct PlainLanes {
    var held: [String: (shared: Int, exclusive: Bool)] = [:]
    var waiting: [(id: WaiterID, claims: [LaneClaim<String>])] = []

    func isFree(_ claim: LaneClaim<String>) -> Bool {
        guard let entry = held[claim.key] else { return true }
        return !entry.exclusive && (!claim.exclusive || entry.shared == 0)
    }

    mutating func take(_ claims: [LaneClaim<String>]) {
        for claim in claims {
            var entry = held[claim.key] ?? (0, false)
            if claim.exclusive { entry.exclusive = true } else { entry.shared += 1 }
            held[claim.key] = entry
        }
    }

    mutating func takeAtOnce(_ claims: [LaneClaim<String>]) -> Bool {
        let conflicts = waiting.contains { waiter in
            waiter.claims.contains { queued in claims.contains { $0.conflicts(with: queued) } }
        }
        guard claims.allSatisfy(isFree), !conflicts else { return false }
        take(claims)
        return true
    }

    mutating func release(_ claims: [LaneClaim<String>]) -> [WaiterID] {
        for claim in claims {
            guard var entry = held[claim.key] else { continue }
            if claim.exclusive { entry.exclusive = false } else { entry.shared -= 1 }
            held[claim.key] = entry.exclusive || entry.shared > 0 ? entry : nil
        }
        return admitWaiting()
    }

    mutating func leave(_ id: WaiterID) -> [WaiterID] {
        waiting.removeAll { $0.id == id }
        return admitWaiting()
    }

    mutating func admitWaiting() -> [WaiterID] {
        var blocked: [LaneClaim<String>] = []
        var admitted: [WaiterID] = []
        var kept: [(id: WaiterID, claims: [LaneClaim<String>])] = []
        for waiter in waiting {
            let free =
                waiter.claims.allSatisfy(isFree)
                && !waiter.claims.contains { claim in blocked.contains { $0.conflicts(with: claim) } }
            if free {
                take(waiter.claims)
                admitted.append(waiter.id)
            } else {
                blocked += waiter.claims
                kept.append(waiter)
            }
        }
        waiting = kept
        return admitted
    }
}

/// A small deterministic generator, so a failure can be replayed.
private struct SplitMix {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

@Suite struct LaneTableTests {
    private static let keys = ["device", "adapter", "a.write", "b.write"]

    private func randomClaims(_ random: inout SplitMix) -> [LaneClaim<String>] {
        var claims: [LaneClaim<String>] = []
        var keys = Self.keys
        for _ in 0...random.next(2) {
            let key = keys.remove(at: random.next(keys.count))
            claims.append(LaneClaim(key, exclusive: random.next(3) == 0))
        }
        return claims
    }

    @Test(arguments: 1...40) func decidesAsTheWalkOfAllWaitersDoes(seed: Int) {
        var random = SplitMix(state: UInt64(seed))
        var table = LaneTable<String>()
        var plain = PlainLanes()
        var running: [(id: WaiterID, claims: [LaneClaim<String>])] = []
        var waitingClaims: [WaiterID: [LaneClaim<String>]] = [:]
        var nextID: UInt64 = 0
        for step in 0..<400 {
            var admitted: [WaiterID] = []
            switch random.next(3) {
            case 0:
                let claims = randomClaims(&random)
                let id = WaiterID(rawValue: nextID)
                nextID += 1
                let now = table.takeAtOnce(claims)
                let plainNow = plain.takeAtOnce(claims)
                #expect(now == plainNow, "step \(step)")
                if now {
                    running.append((id, claims))
                } else {
                    table.enqueue(id, claims)
                    plain.waiting.append((id, claims))
                    waitingClaims[id] = claims
                }
            case 1 where !running.isEmpty:
                let done = running.remove(at: random.next(running.count))
                admitted = table.release(done.claims)
                let plainAdmitted = plain.release(done.claims)
                #expect(Set(admitted) == Set(plainAdmitted), "step \(step)")
            case 2 where !plain.waiting.isEmpty:
                let id = plain.waiting[random.next(plain.waiting.count)].id
                admitted = table.leave(id)
                let plainAdmitted = plain.leave(id)
                #expect(Set(admitted) == Set(plainAdmitted), "step \(step)")
                waitingClaims[id] = nil
            default:
                continue
            }
            for id in admitted {
                if let claims = waitingClaims.removeValue(forKey: id) { running.append((id, claims)) }
            }
            for key in Self.keys {
                let waiting = plain.waiting.filter { $0.claims.contains { $0.key == key } }.count
                #expect(table.occupancy(key).waiting == waiting, "step \(step), \(key)")
            }
        }
    }

    @Test func tenThousandWaitersLeavingOneByOneAdmitNobodyAndCostLittle() {
        var table = LaneTable<String>()
        let took = table.takeAtOnce([.exclusive("adapter")])
        #expect(took)
        let ids = (0..<10_000).map { WaiterID(rawValue: UInt64($0)) }
        for id in ids { table.enqueue(id, [.exclusive("adapter")]) }
        // Each leave looks at the head of one queue: 10,000 of them are a
        // moment's work (a walk of all waiters each would be 10^8 steps).
        var admittedOnLeaving = 0
        for id in ids.reversed() where id.rawValue > 0 { admittedOnLeaving += table.leave(id).count }
        #expect(admittedOnLeaving == 0)
        #expect(table.occupancy("adapter") == (1, 1))
        let admitted = table.release([.exclusive("adapter")])
        #expect(admitted == [ids[0]])
        #expect(table.occupancy("adapter") == (1, 0))
    }
}
