import Foundation
import TestSupport

/// The events a `curl -N` child has received so far.
final class EventStreamClient: Sendable {
    struct Event: Equatable {
        var id: String?
        var type: String
        var data: String

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        }
    }

    let process: ChildProcess

    init(_ process: ChildProcess) { self.process = process }

    /// Every complete event so far (comments skipped).
    var events: [Event] {
        var events: [Event] = []
        for block in process.standardOutput.components(separatedBy: "\n\n").dropLast() {
            var event = Event(id: nil, type: "message", data: "")
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { event.type = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") {
                    event.data += String(line.dropFirst(6))
                    hasData = true
                }
            }
            if hasData { events.append(event) }
        }
        return events
    }

    /// Waits until `condition` holds for the events so far.
    @discardableResult
    func waitFor(
        timeout: Duration = .seconds(20), _ condition: @escaping ([Event]) -> Bool
    ) async -> [Event] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = events
            if condition(now) { return now }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return events
    }

    /// Waits for `count` events of `type`.
    func waitFor(_ count: Int, of type: String, timeout: Duration = .seconds(20)) async -> [Event] {
        await waitFor(timeout: timeout) { $0.filter { $0.type == type }.count >= count }.filter { $0.type == type }
    }

    /// The client leaves (closes the connection).
    func close() { process.kill() }

    /// Whether curl has exited (the server ended the stream).
    func hasEnded(within timeout: Duration) async -> Bool {
        await process.wait(timeout: timeout) != nil
    }
}
