import HTTPServer
import Synchronization

/// Every stream the gateway has open, so that stopping the gateway can end
/// them all, each with its documented last event, and so that /health can
/// count them.
final class OpenStreams: Sendable {
    /// Builds a stream's last event when the gateway stops.
    typealias LastEvent = @Sendable () -> ServerSentEvent

    private struct Open {
        let writer: StreamWriter
        let lastEvent: LastEvent
    }

    private let writers = Mutex<(next: UInt64, open: [UInt64: Open])>((0, [:]))

    /// A writer whose stream is registered here until it ends; `onEnd`
    /// runs once when it does, for any reason; `lastEvent` is what the
    /// stream is sent when the gateway stops.
    func makeWriter(
        _ configuration: StreamConfiguration, lastEvent: @escaping LastEvent,
        onEnd: @escaping @Sendable (StreamEnd) -> Void
    ) -> StreamWriter {
        let key = writers.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let writer = StreamWriter(configuration: configuration) { [weak self] end in
            _ = self?.writers.withLock { $0.open.removeValue(forKey: key) }
            onEnd(end)
        }
        writers.withLock { $0.open[key] = Open(writer: writer, lastEvent: lastEvent) }
        return writer
    }

    /// Ends every open stream with its last event (what is queued, the
    /// last event included, is still sent before the connection closes).
    func finishAll() {
        for stream in writers.withLock({ Array($0.open.values) }) {
            _ = stream.writer.write(stream.lastEvent())
            stream.writer.finish()
        }
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
