import Synchronization

/// What runs on every connection's loop thread at the end of each turn
/// (`Connection.atEndOfEachTurn`).
final class TurnObservers: Sendable {
    static let shared = TurnObservers()

    private let observers = Mutex<[@Sendable () -> Void]>([])
    /// Read without the lock on every turn; set under it.
    private let count = Atomic(0)

    func add(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { observers in
            observers.append(observer)
            count.store(observers.count, ordering: .releasing)
        }
    }

    /// Called by a loop thread before it waits in poll again.
    func turnEnded() {
        guard count.load(ordering: .acquiring) > 0 else { return }
        for observer in observers.withLock({ $0 }) { observer() }
    }
}
