import Synchronization

/// Waits until `condition` holds, checking every millisecond, for at most
/// `limit` (generous: the machine may be loaded). Returns whether it held.
func eventually(within limit: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// A number shared by tasks.
final class Counter: Sendable {
    let value = Atomic(0)
}
