import Synchronization

/// A number shared by tasks.
final class Counter: Sendable {
    let value = Atomic(0)
}
