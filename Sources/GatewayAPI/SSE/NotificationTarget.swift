import HTTPServer
import Synchronization

/// Where a notification stream's frames go. The lease is taken before the
/// stream's writer exists (a failed subscription is the request's error,
/// with no stream left behind), so what arrives in between is kept and
/// written first, in order, once the writer is attached.
final class NotificationTarget: Sendable {
    private enum State {
        case pending(frames: [[UInt8]], last: ServerSentEvent?)
        case attached(StreamWriter)
    }

    private let state = Mutex(State.pending(frames: [], last: nil))

    /// Queues a frame (on the writer, or until it is attached).
    func write(_ frame: [UInt8]) {
        state.withLock { state in
            switch state {
            case .attached(let writer): writer.write(frame)
            case .pending(var frames, let last):
                guard last == nil else { return }
                frames.append(frame)
                state = .pending(frames: frames, last: nil)
            }
        }
    }

    /// Ends the stream with `event` as its last.
    func finish(with event: ServerSentEvent) {
        state.withLock { state in
            switch state {
            case .attached(let writer): writer.finish(with: event)
            case .pending(let frames, let last):
                if last == nil { state = .pending(frames: frames, last: event) }
            }
        }
    }

    /// From now on frames go to `writer`, after those that came before.
    func attach(_ writer: StreamWriter) {
        state.withLock { state in
            guard case .pending(let frames, let last) = state else { return }
            for frame in frames { writer.write(frame) }
            if let last { writer.finish(with: last) }
            state = .attached(writer)
        }
    }
}
