import Foundation
import TestSupport

/// The events a `curl -N` child has received so far.
final class EventStreamClient: Sendable {
    let process: ChildProcess

    init(_ process: ChildProcess) { self.process = process }

    /// Every complete event so far (blocks without data skipped, as an
    /// EventSource skips them).
    var events: [ReceivedEvent] {
        ReceivedEvent.blocks(in: process.standardOutput).blocks.filter { !$0.dataLines.isEmpty }
    }

    /// Waits until `condition` holds for the events so far.
    @discardableResult
    func waitFor(
        timeout: Duration = .seconds(20), _ condition: @escaping ([ReceivedEvent]) -> Bool
    ) async -> [ReceivedEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = events
            if condition(now) { return now }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return events
    }

    /// Waits for `count` events of `type`.
    func waitFor(_ count: Int, of type: String, timeout: Duration = .seconds(20)) async -> [ReceivedEvent] {
        await waitFor(timeout: timeout) { $0.filter { $0.type == type }.count >= count }.filter { $0.type == type }
    }

    /// The client leaves (closes the connection).
    func close() { process.kill() }

    /// Whether curl has exited (the server ended the stream).
    func hasEnded(within timeout: Duration) async -> Bool {
        await process.wait(timeout: timeout) != nil
    }
}
