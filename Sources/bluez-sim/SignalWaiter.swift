import Dispatch
import Glibc

/// Waits for SIGINT or SIGTERM without blocking a thread of Swift's
/// cooperative pool: the signals are taken from their default handlers and
/// delivered through dispatch sources.
enum SignalWaiter {
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queue = DispatchQueue(label: "bluez-sim.signals")
            let once = Once(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { once.fire() }
                source.resume()
                once.keep(source)
            }
        }
    }

    /// Resumes the continuation once, and keeps the signal sources alive
    /// (the process ends soon after).
    private final class Once: @unchecked Sendable {
        // Safe because `keep` runs before any source is able to fire (in
        // the continuation's synchronous body) and every call to `fire`
        // runs on the one serial queue the signal sources deliver to.
        private var continuation: CheckedContinuation<Void, Never>?
        private var sources: [any DispatchSourceSignal] = []
        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
        func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
        func fire() {
            continuation?.resume()
            continuation = nil
        }
    }
}
