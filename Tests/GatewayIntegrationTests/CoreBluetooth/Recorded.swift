import Foundation
import Synchronization

/// What delegates were told, for a test to wait on: each callback appends
/// a line (and anything it carries) under a lock, and a test polls.
final class Recorded<Entry: Sendable>: Sendable {
    private let entries = Mutex<[Entry]>([])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var all: [Entry] { entries.withLock { $0 } }

    /// Waits until `condition` holds for the entries so far, and returns
    /// them. Two minutes at most: the whole suite runs its tests at once,
    /// each with a gateway, a simulator and a bus, and on two cores a
    /// flow of a dozen requests has been seen to take a minute; a flow that
    /// will never complete fails all the same.
    @discardableResult
    func wait(timeout: Duration = .seconds(120), until condition: ([Entry]) -> Bool) async -> [Entry] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = all
            if condition(now) { return now }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return all
    }
}

/// A queue that knows itself, so a delegate can check it is called on it.
final class CallbackQueue: Sendable {
    private static let key = DispatchSpecificKey<String>()
    let queue: DispatchQueue
    let name: String

    init(_ name: String) {
        self.name = name
        queue = DispatchQueue(label: name)
        queue.setSpecific(key: Self.key, value: name)
    }

    /// Whether the caller runs on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == name }
}
