import MQTT
import Testing

@Suite struct OutboxTests {
    @Test func keepsOrderAndDropsTheOldestWhenFull() {
        var outbox = Outbox<Int>(capacity: 3)
        for value in 1...3 { #expect(outbox.append(value) == nil) }
        #expect(outbox.append(4) == 1)
        #expect(outbox.append(5) == 2)
        #expect(outbox.count == 3 && outbox.dropped == 2)
        #expect(outbox.popFirst() == 3)
        #expect(outbox.append(6) == nil)
        var drained: [Int] = []
        while let value = outbox.popFirst() { drained.append(value) }
        #expect(drained == [4, 5, 6] && outbox.isEmpty && outbox.dropped == 2)
    }

    @Test func capacityZeroKeepsNothing() {
        var outbox = Outbox<Int>(capacity: 0)
        #expect(outbox.append(1) == 1)
        #expect(outbox.isEmpty && outbox.dropped == 1)
    }
}
