import Testing

@testable import GatewayAPI

/// The quota ledger's accounting, without a gateway: places taken, named,
/// given back and freed; restored resources counted whatever the limits.
@Suite struct QuotaLedgerTests {
    let alice = ClientID(rawValue: "address:10.0.0.1")
    let bob = ClientID(rawValue: "address:10.0.0.2")

    func ledger(perClient: Int?, total: Int) -> QuotaLedger {
        var quotas = Quotas()
        quotas.standingSubscriptions = Quotas.Limit(perClient: perClient, total: total)
        return QuotaLedger(quotas: quotas)
    }

    @Test func aClientsLimitIs429AndTheGatewaysIs507() throws {
        let ledger = ledger(perClient: 2, total: 3)
        for key in ["1", "2"] { ledger.assign(try ledger.reserve(.standingSubscription, for: alice), key: key) }
        #expect(throws: Problem.self) { try ledger.reserve(.standingSubscription, for: alice) }
        do {
            _ = try ledger.reserve(.standingSubscription, for: alice)
        } catch {
            #expect(error.status == .tooManyRequests && error.kind == .quotaExceeded)
            #expect(error.detail.contains("--max-subscriptions-per-client 2"), "\(error.detail)")
        }
        ledger.assign(try ledger.reserve(.standingSubscription, for: bob), key: "3")
        do {
            _ = try ledger.reserve(.standingSubscription, for: bob)
            Issue.record("a fourth place past a total of 3")
        } catch {
            #expect(error.status == .insufficientStorage && error.kind == .capacityExhausted)
        }
        // Freeing one of Alice's gives her (and the gateway) a place again.
        ledger.release(.standingSubscription, key: "1")
        ledger.assign(try ledger.reserve(.standingSubscription, for: alice), key: "4")
    }

    @Test func aCancelledSlotAndAResourceMadeTwiceTakeNoPlace() throws {
        let ledger = ledger(perClient: nil, total: 1)
        ledger.cancel(try ledger.reserve(.standingSubscription, for: alice))
        let first = try ledger.reserve(.standingSubscription, for: alice)
        ledger.assign(first, key: "k")
        #expect(ledger.holds(.standingSubscription, key: "k"))
        ledger.release(.standingSubscription, key: "k")
        ledger.release(.standingSubscription, key: "k")
        ledger.assign(try ledger.reserve(.standingSubscription, for: bob), key: "k")
        #expect(throws: Problem.self) { try ledger.reserve(.standingSubscription, for: alice) }
    }

    @Test func restoredResourcesCountWhateverTheLimits() throws {
        let ledger = ledger(perClient: 1, total: 2)
        for key in ["a", "b", "c"] { ledger.restore(.standingSubscription, key: key, owner: alice) }
        ledger.restore(.standingSubscription, key: "a", owner: alice)
        #expect(throws: Problem.self) { try ledger.reserve(.standingSubscription, for: bob) }
        for key in ["a", "b"] { ledger.release(.standingSubscription, key: key) }
        #expect(throws: Problem.self) { try ledger.reserve(.standingSubscription, for: alice) }
        ledger.assign(try ledger.reserve(.standingSubscription, for: bob), key: "d")
    }

    /// Many clients racing for the last places: never more than the total.
    @Test func concurrentReservationsNeverPassTheTotal() async throws {
        let ledger = ledger(perClient: nil, total: 50)
        let granted = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<500 {
                group.addTask {
                    let client = ClientID(rawValue: "address:10.0.1.\(index % 7)")
                    guard let slot = try? ledger.reserve(.standingSubscription, for: client) else { return false }
                    ledger.assign(slot, key: "\(index)")
                    return true
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(granted == 50)
    }
}
