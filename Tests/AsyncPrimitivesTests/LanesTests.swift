import AsyncPrimitives
import Synchronization
import Testing
import TestSupport

@Suite struct LanesTests {
    /// Holds `claims` until `gate` yields; returns when the claims are held.
    private func hold(_ lanes: Lanes<String>, _ claims: [LaneClaim<String>], until gate: AsyncStream<Void>) async
        -> Task<Void, any Error>
    {
        let held = Counter()
        let task = Task {
            try await lanes.run(claims, deadline: .now + .seconds(60)) {
                held.value.store(1, ordering: .relaxed)
                for await _ in gate { break }
            }
        }
        _ = await eventually { held.value.load(ordering: .relaxed) == 1 }
        return task
    }

    @Test func aTaskCancelledBeforeJoiningNeitherWaitsNorTakesTheLane() async throws {
        let lanes = Lanes<String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let holder = await hold(lanes, [.exclusive("device")], until: gate)
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await lanes.run("device", deadline: .now + .seconds(60)) { "ran" }
        }
        // Fails at once: not at the holder's end, not at its deadline.
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(lanes.occupancy("device").waiting == 0)
        open.yield()
        try await holder.value
        let free = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await lanes.run("device", deadline: .now + .seconds(60)) { "ran" }
        }
        await #expect(throws: CancellationError.self) { try await free.value }
        #expect(lanes.occupancy("device").running == 0)
    }

    @Test func sharedClaimsRunSideBySideAndAnExclusiveOneWaitsForThem() async throws {
        let lanes = Lanes<String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let first = await hold(lanes, [.shared("device")], until: gate)
        let second = await hold(lanes, [.shared("device")], until: gate)
        #expect(lanes.occupancy("device").running == 2)
        let exclusive = Task { try await lanes.run("device", deadline: .now + .seconds(60)) { "alone" } }
        #expect(await eventually { lanes.occupancy("device").waiting == 1 })
        // A shared claim that arrives later waits behind the exclusive one.
        let later = Task { try await lanes.run([.shared("device")], deadline: .now + .seconds(60)) { "later" } }
        #expect(await eventually { lanes.occupancy("device").waiting == 2 })
        open.yield()
        open.yield()
        try await first.value
        try await second.value
        #expect(try await exclusive.value == "alone")
        #expect(try await later.value == "later")
    }

    @Test func claimsOnOtherKeysPassAWaitingConflict() async throws {
        let lanes = Lanes<String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let writer = await hold(lanes, [.shared("device"), .exclusive("a.write")], until: gate)
        let secondWrite = Task {
            try await lanes.run([.shared("device"), .exclusive("a.write")], deadline: .now + .seconds(60)) { "a" }
        }
        #expect(await eventually { lanes.occupancy("a.write").waiting == 1 })
        // A write of another characteristic does not wait for either.
        #expect(try await lanes.run([.shared("device"), .exclusive("b.write")], deadline: .now + .seconds(60)) { "b" } == "b")
        open.yield()
        try await writer.value
        #expect(try await secondWrite.value == "a")
    }

    @Test func aWaiterThatLeavesUnblocksThoseBehindIt() async throws {
        let lanes = Lanes<String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let reader = await hold(lanes, [.shared("device")], until: gate)
        let exclusive = Task { try await lanes.run("device", deadline: .now + .seconds(60)) { "alone" } }
        #expect(await eventually { lanes.occupancy("device").waiting == 1 })
        let shared = Task { try await lanes.run([.shared("device")], deadline: .now + .seconds(60)) { "shared" } }
        #expect(await eventually { lanes.occupancy("device").waiting == 2 })
        exclusive.cancel()
        await #expect(throws: CancellationError.self) { try await exclusive.value }
        // Nothing conflicting is left ahead of it.
        #expect(try await shared.value == "shared")
        open.yield()
        try await reader.value
    }

    @Test func tenThousandWaitersTimingOutLeaveOtherLanesRunning() async throws {
        let lanes = Lanes<String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let holder = await hold(lanes, [.exclusive("adapter")], until: gate)
        let deadline = ContinuousClock.now + .milliseconds(300)
        let timedOut = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<10_000 {
                group.addTask {
                    do {
                        try await lanes.run("adapter", deadline: deadline) {}
                        return false
                    } catch is WaitTimeout {
                        return true
                    }
                }
            }
            // Another device's operations go on while the waiters leave.
            group.addTask {
                for _ in 0..<100 { try await lanes.run("device", deadline: .now + .seconds(60)) {} }
                return true
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(timedOut == 10_001)
        #expect(lanes.occupancy("adapter") == (1, 0))
        open.yield()
        try await holder.value
        #expect(try await lanes.run("adapter", deadline: .now + .seconds(60)) { "free" } == "free")
    }
}
