import Testing

@testable import BlueZ

/// `DeliveryQueue`: one deliverer at a time, deliveries in the order they
/// were queued, and buffers that keep their capacity from batch to batch.
@Suite struct DeliveryQueueTests {
    private func event(_ n: Int) -> Delivery { .event(.adapterState(adapter: "hci\(n)", .poweredOn)) }

    private func adapters(_ batch: [Delivery]) -> [String] {
        batch.compactMap { delivery in
            if case .event(.adapterState(let adapter, _)) = delivery { adapter } else { nil }
        }
    }

    @Test func oneThreadDeliversAtATimeAndGoesOnUntilNothingIsLeft() {
        var queue = DeliveryQueue()
        let none = queue.claim()
        #expect(none == nil, "nothing to deliver")
        queue.append(event(0))
        queue.append(event(1))
        guard var batch = queue.claim() else {
            Issue.record("the first claim gets the pending deliveries")
            return
        }
        #expect(adapters(batch) == ["hci0", "hci1"])
        // Another thread queues while the first delivers: it may not claim.
        queue.append(event(2))
        let refused = queue.claim()
        #expect(refused == nil)
        // The deliverer takes what was queued meanwhile, in order.
        batch.removeAll(keepingCapacity: true)
        let more = queue.next(after: &batch)
        #expect(more)
        #expect(adapters(batch) == ["hci2"])
        batch.removeAll(keepingCapacity: true)
        let again = queue.next(after: &batch)
        #expect(!again, "nothing left: the turn ends")
        #expect(queue.isEmpty)
        // The next claim is anyone's.
        queue.append(event(3))
        let next = queue.claim()
        #expect(next.map(adapters) == ["hci3"])
    }

    @Test func buffersKeepTheirCapacity() {
        var queue = DeliveryQueue()
        var grown = 0
        // Two batches grow the two buffers (one fills while the other is
        // delivered) ...
        for round in 0..<2 {
            for n in 0..<64 { queue.append(event(round * 64 + n)) }
            guard var batch = queue.claim() else {
                Issue.record("nothing claimed")
                return
            }
            grown = batch.capacity
            batch.removeAll(keepingCapacity: true)
            let more = queue.next(after: &batch)
            #expect(!more)
        }
        // ... after which a batch is queued in a buffer that has room.
        queue.append(event(128))
        let again = queue.claim()
        #expect(again.map(adapters) == ["hci128"])
        #expect((again?.capacity ?? 0) >= grown)
    }
}
