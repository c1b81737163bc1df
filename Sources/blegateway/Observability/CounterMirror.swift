import Metrics
import Synchronization

/// A Prometheus counter that follows a total kept elsewhere (a client's
/// statistics, the kernel's CPU time): it goes up by the difference since
/// the last reading.
final class CounterMirror: Sendable {
    private let counter: FloatingPointCounter
    private let counted = Mutex<Double>(0)

    init(_ label: String) { counter = FloatingPointCounter(label: label) }

    func set(_ total: Double) {
        let delta = counted.withLock { counted in
            defer { counted = max(counted, total) }
            return total - counted
        }
        if delta > 0 { counter.increment(by: delta) }
    }

    func set(_ total: Int) { set(Double(total)) }
}
