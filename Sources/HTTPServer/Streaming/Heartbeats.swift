import Synchronization

/// Sends the heartbeats of every open stream in the process from one task,
/// so that an idle stream holds no task (nor its memory) of its own.
///
/// Each writer is due every `interval`; the task sleeps until the earliest
/// due writer. A writer added with a due time earlier than that wake-up
/// starts a new task in place of the sleeping one. With no writers left the
/// task ends.
final class Heartbeats: Sendable {
    static let shared = Heartbeats()

    private struct Entry {
        let writer: StreamWriter
        let interval: Duration
        var due: ContinuousClock.Instant
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The running task's generation and the time it will wake at.
        var generation: UInt64 = 0
        var task: Task<Void, Never>?
        var wake: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// `writer` gets `heartbeatDue()` every `interval` until `remove`.
    func add(_ writer: StreamWriter, every interval: Duration) {
        let due = ContinuousClock.now + interval
        let replaced = state.withLock { state -> Task<Void, Never>? in
            state.entries[ObjectIdentifier(writer)] = Entry(writer: writer, interval: interval, due: due)
            if let wake = state.wake, wake <= due, state.task != nil { return nil }
            let old = state.task
            state.generation += 1
            let generation = state.generation
            state.wake = due
            state.task = Task { [self] in await run(generation) }
            return old
        }
        replaced?.cancel()
    }

    func remove(_ writer: StreamWriter) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(writer)) }
    }

    private func run(_ generation: UInt64) async {
        while true {
            let now = ContinuousClock.now
            let (due, wake) = state.withLock { state -> ([StreamWriter], ContinuousClock.Instant?) in
                guard state.generation == generation else { return ([], nil) }
                var due: [StreamWriter] = []
                var earliest: ContinuousClock.Instant?
                for (key, entry) in state.entries {
                    var entry = entry
                    if entry.due <= now {
                        due.append(entry.writer)
                        entry.due = now + entry.interval
                        state.entries[key] = entry
                    }
                    earliest = min(earliest ?? entry.due, entry.due)
                }
                state.wake = earliest
                if earliest == nil { state.task = nil }
                return (due, earliest)
            }
            for writer in due where !writer.heartbeatDue() { remove(writer) }
            guard let wake else { return }
            do { try await Task.sleep(until: wake, clock: .continuous) } catch { return }
        }
    }
}
