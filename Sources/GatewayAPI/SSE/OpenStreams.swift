import HTTPServer
import Synchronization

/// Every stream the gateway has open, so that stopping the gateway can end
/// them all, and so that /health can count them.
final class OpenStreams: Sendable {
    private let writers = Mutex<(next: UInt64, open: [UInt64: StreamWriter])>((0, [:]))

    /// A writer whose stream is registered here until it ends; `onEnd`
    /// runs once when it does, for any reason. With a `lifetime` (a client's
    /// `duration_ms`) the stream ends by itself after that long, with
    /// `lastEvent` as its last event when there is one.
    func makeWriter(
        _ configuration: StreamConfiguration, lifetime: Duration? = nil,
        lastEvent: (@Sendable () -> ServerSentEvent)? = nil, onEnd: @escaping @Sendable (StreamEnd) -> Void
    ) -> StreamWriter {
        let key = writers.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let timer = StreamTask()
        let writer = StreamWriter(configuration: configuration) { [weak self] end in
            timer.cancel()
            _ = self?.writers.withLock { $0.open.removeValue(forKey: key) }
            onEnd(end)
        }
        writers.withLock { $0.open[key] = writer }
        if let lifetime {
            timer.start {
                guard (try? await Task.sleep(for: lifetime)) != nil else { return }
                if let lastEvent { _ = writer.write(lastEvent()) }
                writer.finish()
            }
        }
        return writer
    }

    /// Ends every open stream (what is queued is still sent).
    func finishAll() {
        for writer in writers.withLock({ Array($0.open.values) }) { writer.finish() }
    }

    var count: Int { writers.withLock { $0.open.count } }
}

/// A task tied to a stream: the stream's end cancels it, even if the end
/// comes before the task is started.
final class StreamTask: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    func start(_ body: @escaping @Sendable () async -> Void) {
        let task = Task { await body() }
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
