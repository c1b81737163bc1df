import AsyncPrimitives
import Testing
import TestSupport

@Suite struct BroadcastTests {
    @Test func everySubscriberGetsEveryValueInOrderUntilFinished() async {
        let broadcast = Broadcast<Int>()
        let first = broadcast.subscribe()
        let second = broadcast.subscribe()
        for value in 1...3 { broadcast.yield(value) }
        broadcast.finish()
        var firstValues: [Int] = []
        for await value in first { firstValues.append(value) }
        var secondValues: [Int] = []
        for await value in second { secondValues.append(value) }
        #expect(firstValues == [1, 2, 3])
        #expect(secondValues == [1, 2, 3])
    }

    @Test func aFilteredSubscriberGetsOnlyWhatItsFilterPasses() async {
        let broadcast = Broadcast<Int>()
        let all = broadcast.subscribe()
        let even = broadcast.subscribe { $0 % 2 == 0 }
        #expect(broadcast.subscriberCount == 2 && broadcast.unfilteredSubscriberCount == 1)
        for value in 1...4 { broadcast.yield(value) }
        broadcast.finish()
        var allValues: [Int] = []
        for await value in all { allValues.append(value) }
        var evenValues: [Int] = []
        for await value in even { evenValues.append(value) }
        #expect(allValues == [1, 2, 3, 4])
        #expect(evenValues == [2, 4])
        #expect(broadcast.subscriberCount == 0 && broadcast.unfilteredSubscriberCount == 0)
    }

    @Test func aSubscriberAfterFinishGetsAFinishedStream() async {
        let broadcast = Broadcast<Int>()
        broadcast.finish()
        let late = broadcast.subscribe()
        broadcast.yield(1)
        var values: [Int] = []
        for await value in late { values.append(value) }
        #expect(values.isEmpty)
    }

    @Test func aCancelledConsumerIsForgotten() async {
        let broadcast = Broadcast<Int>()
        let stream = broadcast.subscribe()
        let consumer = Task {
            for await _ in stream {}
        }
        #expect(broadcast.subscriberCount == 1)
        consumer.cancel()
        await consumer.value
        #expect(await eventually { broadcast.subscriberCount == 0 })
    }

    @Test func aHandlerIsCalledOnTheYieldingThreadInOrderUntilRemoved() {
        let broadcast = Broadcast<Int>()
        let seen = SleepingMutex<[Int]>([])
        let even = SleepingMutex<[Int]>([])
        let handler = broadcast.addHandler { value in seen.withLock { $0.append(value) } }
        broadcast.addHandler(filter: { $0 % 2 == 0 }) { value in even.withLock { $0.append(value) } }
        #expect(broadcast.subscriberCount == 2 && broadcast.unfilteredSubscriberCount == 1)
        for value in 1...4 { broadcast.yield(value) }
        // Called before `yield` returned: no task in between.
        #expect(seen.withLock { $0 } == [1, 2, 3, 4])
        #expect(even.withLock { $0 } == [2, 4])
        if let handler { broadcast.removeHandler(handler) }
        broadcast.yield(6)
        #expect(seen.withLock { $0 } == [1, 2, 3, 4])
        #expect(even.withLock { $0 } == [2, 4, 6])
        broadcast.finish()
        #expect(broadcast.subscriberCount == 0)
        #expect(broadcast.addHandler { _ in } == nil, "no handler after finish")
    }
}
