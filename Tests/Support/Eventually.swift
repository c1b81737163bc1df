/// Polls `condition` every 10 ms until it holds or `limit` passes
/// (generous by default: the machine may be loaded), and says whether it
/// held. It looks once more at the deadline, so a condition that came true
/// while the poller slept is not missed.
public func eventually(within limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
