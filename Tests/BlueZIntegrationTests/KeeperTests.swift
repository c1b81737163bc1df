import Testing

@testable import BlueZ

/// A kept device that stays away cannot flood what is passed on of the
/// keeper's events: its `reconnecting` steps are announced ever more
/// rarely, while every attempt is an event and every failure is counted.
@Suite struct KeeperTests {
    @Test(.timeLimit(.minutes(2))) func anAbsentDeviceIsAnnouncedOnlyWhenThePauseGrowsAndAtPowersOfTwo() async throws {
        let harness = try await Harness()
        var policy = ConnectionKeeper.Policy()
        policy.connectTimeout = .milliseconds(50)
        policy.initialDelay = .milliseconds(1)
        policy.maximumDelay = .milliseconds(4)
        let keeper = ConnectionKeeper(central: harness.central, policy: policy)
        let events = keeper.events()
        let absent = address("AA:00:00:00:00:0D")
        keeper.keep(absent, adapter: "hci0")

        var attempts: [Int] = []
        var announced: [Int] = []
        for await event in events {
            guard case .reconnecting(_, _, let attempt, _, _) = event else { continue }
            attempts.append(attempt)
            if keeper.announces(event) { announced.append(attempt) }
            if attempt == 32 { break }
        }
        let failed = keeper.keptDevice(absent, adapter: "hci0")?.failedAttempts ?? 0
        keeper.stop()
        await harness.shutdown()
        // Pauses before attempts 2, 3, 4: 1, 2 and 4 ms (the maximum).
        #expect(attempts == Array(1...32))
        #expect(announced == [1, 2, 3, 4, 8, 16, 32])
        #expect(failed >= 31, "every attempt is counted: \(failed)")
    }
}
