import Foundation
import Glibc
import Testing
import TestSupport
@testable import PersistedState

/// The store's process killed with SIGKILL while it appends: every event
/// whose commit was acknowledged is there after a reopen, and ids continue.
@Suite struct CrashTests {
    @Test func everyAcknowledgedEventSurvivesAKillAndIdsContinue() async throws {
        let temporary = try TemporaryDirectory()
        var acknowledged: UInt64 = 0
        for round in 1...3 {
            let probe = try ChildProcess([probeProgram, "append", temporary.path])
            defer { probe.kill() }
            // Kill it once it has acknowledged a few thousand events more.
            let target = acknowledged + 3_000
            var newest: UInt64 = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                newest = Self.lastCommitted(probe.standardOutput) ?? 0
                if newest >= target { break }
                if await probe.wait(timeout: .zero) != nil { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            try #require(newest >= target, "round \(round): acknowledged \(newest) of \(target): \(probe.standardError)")
            if round > 1 {
                // The ids of this run start after everything acknowledged before.
                let started = probe.standardOutput.split(separator: "\n").first { $0.hasPrefix("started next=") }
                #expect(started.flatMap { UInt64($0.dropFirst("started next=".count)) }.map { $0 > acknowledged } == true)
            }
            probe.signal(SIGKILL)
            #expect(await probe.wait(timeout: .seconds(30)) == 128 + SIGKILL)
            // Everything it said before it died, read to the pipe's end.
            let said = Self.lastCommitted(probe.standardOutput) ?? 0
            #expect(said >= newest)

            let store = try Store.open(directory: temporary.path, options: testOptions { $0.maximumEventCount = 100_000_000 })
            let events = try await allEvents(store)
            let newestStored = events.last?.id ?? 0
            #expect(newestStored >= said, "round \(round): acknowledged \(said), stored up to \(newestStored)")
            // Ids with no hole from the first but the ids a killed run had
            // handed out and not stored: each is a recorded gap, and the
            // next run starts after it (they are never handed out again).
            #expect(events.first?.id == 1)
            let missing = try await store.missingEvents(after: 0, through: .max)
            let holes = zip(events, events.dropFirst()).filter { pair in
                pair.1.id != pair.0.id + 1 && !missing.contains(pair.0.id + 1...pair.1.id - 1)
            }.map { "\($0.0.id)->\($0.1.id)" }
            #expect(holes.isEmpty, "round \(round): holes \(holes.prefix(10)), recorded gaps \(missing)")
            let lostNow = store.recovery?.lostEventIDs
            #expect(store.nextEventID == (lostNow?.upperBound ?? newestStored) + 1, "\(String(describing: lostNow))")
            #expect(lostNow.map { $0.lowerBound == newestStored + 1 } ?? true, "\(String(describing: lostNow))")
            #expect(try await store.keptConnections().map(\.address) == ["AA:BB:CC:DD:EE:01"])
            acknowledged = said
            await store.close()
        }
    }

    /// The id in the last complete "committed ID" line.
    static func lastCommitted(_ output: String) -> UInt64? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        // The last line may be cut short by the kill.
        let complete = output.hasSuffix("\n") ? lines : lines.dropLast()
        return complete.last { $0.hasPrefix("committed ") }.flatMap { UInt64($0.dropFirst("committed ".count)) }
    }
}
