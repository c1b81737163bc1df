import AsyncPrimitives
import Synchronization
import Testing
import TestSupport

@Suite struct SingleFlightTests {
    @Test func concurrentCallersShareOneOperation() async throws {
        let flights = SingleFlight<String, Int>()
        let runs = Counter()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let callers = (0..<16).map { _ in
            Task {
                try await flights.run("a") {
                    for await _ in gate { break }
                    return runs.value.add(1, ordering: .relaxed).newValue
                }
            }
        }
        #expect(await eventually { flights.waiting("a") == 16 })
        open.yield()
        for caller in callers { #expect(try await caller.value == 1) }
        #expect(runs.value.load(ordering: .relaxed) == 1)
        // The next call starts a new operation.
        #expect(try await flights.run("a") { runs.value.add(1, ordering: .relaxed).newValue } == 2)
    }

    @Test func aCancelledCallerDoesNotCancelTheOthers() async throws {
        let flights = SingleFlight<String, String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let operation: @Sendable () async throws -> String = {
            for await _ in gate { break }
            try Task.checkCancellation()
            return "value"
        }
        let first = Task { try await flights.run("a", operation) }
        let second = Task { try await flights.run("a", operation) }
        let third = Task { try await flights.run("a", operation) }
        #expect(await eventually { flights.waiting("a") == 3 })
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(flights.waiting("a") == 2)
        open.yield()
        #expect(try await second.value == "value")
        #expect(try await third.value == "value")
    }

    @Test func aCallerWithAnEarlierDeadlineLeavesAtItWithoutEndingTheOperation() async throws {
        struct Late: Error {}
        let flights = SingleFlight<String, String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let starter = Task {
            try await flights.run("a", deadline: .now + .seconds(60)) {
                for await _ in gate { break }
                return "value"
            }
        }
        #expect(await eventually { flights.waiting("a") == 1 })
        await #expect(throws: Late.self) {
            try await flights.run("a", deadline: .now + .milliseconds(20), timeout: { Late() }) { "unused" }
        }
        #expect(flights.waiting("a") == 1)
        open.yield()
        #expect(try await starter.value == "value")
    }

    @Test func differentKeysRunTheirOwnOperations() async throws {
        let flights = SingleFlight<String, String>()
        async let a = flights.run("a") { "a" }
        async let b = flights.run("b") { "b" }
        #expect(try await [a, b] == ["a", "b"])
    }

    @Test func aFailureReachesEveryCaller() async throws {
        struct Broken: Error {}
        let flights = SingleFlight<String, String>()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let callers = (0..<4).map { _ in
            Task {
                try await flights.run("a") {
                    for await _ in gate { break }
                    throw Broken()
                }
            }
        }
        #expect(await eventually { flights.waiting("a") == 4 })
        open.yield()
        for caller in callers { await #expect(throws: Broken.self) { try await caller.value } }
    }
}
