import HTTPServer
import Synchronization

/// Every stream the gateway has open, so that stopping the gateway can end
/// them all, each with its documented last event, and so that /health can
/// count them.
final class OpenStreams: Sendable {
    /// Why a stream ends by the gateway's doing rather than its client's.
    enum Ending: Sendable {
        /// The gateway is stopping.
        case gatewayStopping
        /// The client's `duration_ms` elapsed.
        case durationElapsed
    }

    /// Builds a stream's last event for an ending (nil: none for that ending).
    typealias LastEvent = @Sendable (Ending) -> ServerSentEvent?

    private struct Open {
        let writer: StreamWriter
        let lastEvent: LastEvent
    }

    private let writers = Mutex<(next: UInt64, open: [UInt64: Open])>((0, [:]))

    /// A writer whose stream is registered here until it ends; `onEnd`
    /// runs once when it does, for any reason. `lastEvent` is what the
    /// stream is sent when the gateway ends it: when the gateway stops, or
    /// after `lifetime` (a client's `duration_ms`).
    func makeWriter(
        _ configuration: StreamConfiguration, lifetime: Duration? = nil, lastEvent: @escaping LastEvent,
        onEnd: @escaping @Sendable (StreamEnd) -> Void
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
        writers.withLock { $0.open[key] = Open(writer: writer, lastEvent: lastEvent) }
        if let lifetime {
            timer.start {
                guard (try? await Task.sleep(for: lifetime)) != nil else { return }
                Self.end(writer, with: lastEvent(.durationElapsed))
            }
        }
        return writer
    }

    /// Ends every open stream with its last event (what is queued, the
    /// last event included, is still sent before the connection closes).
    func finishAll() {
        for stream in writers.withLock({ Array($0.open.values) }) {
            Self.end(stream.writer, with: stream.lastEvent(.gatewayStopping))
        }
    }

    /// The last event and the end in one step, so that a value delivered
    /// meanwhile cannot follow the last event.
    private static func end(_ writer: StreamWriter, with lastEvent: ServerSentEvent?) {
        if let lastEvent { writer.finish(with: lastEvent) } else { writer.finish() }
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
