import AsyncPrimitives
import DequeModule

/// The producing end of a streaming response body, such as a Server-Sent
/// Events stream.
///
/// Write pre-encoded chunks from any thread or task; the writer queues them
/// (sharing the arrays, not copying them) and the server sends them as the
/// client reads. While it has nothing to send the connection is suspended
/// and costs no CPU, yet a client closing the connection ends the stream at
/// once. When idle for `heartbeatInterval` it sends a heartbeat, which also
/// reveals a client that vanished without closing. A client that lets more
/// than `maxBufferedBytes` pile up is dropped, so one slow reader never
/// holds back the others or grows memory without bound. A backlog larger
/// than that (a stream resuming from an old event) is not written at once
/// but pulled, a batch each time the client has taken the last (`pull`).
///
/// `onTermination` runs exactly once, on some task, when the stream ends for
/// any reason (see `StreamEnd`): after its connection is done with it. A
/// writer serves one response; one that is never sent in a response never
/// ends, so stop writing to a writer once `write` returns false.
///
/// ```swift
/// router.get("/v1/events") { request in
///     let writer = StreamWriter { end in hub.remove(id) }
///     hub.add(id, writer)
///     return .eventStream(writer)
/// }
/// // elsewhere, once per event, for all clients:
/// let bytes = ServerSentEvent(id: "7", event: "scan", data: json).encoded
/// for writer in hub.writers { writer.write(bytes) }
/// ```
public final class StreamWriter: Sendable {
    enum Phase {
        case open
        /// Send what is buffered, then end with this reason.
        case finishing(StreamEnd)
        case ended(StreamEnd)
    }

    struct State {
        var chunks = Deque<[UInt8]>()
        /// Bytes of `chunks.first` already handed to the connection.
        var headOffset = 0
        var bufferedBytes = 0
        var phase = Phase.open
        var control: ConnectionControl?
        var attached = false
        var wroteSinceHeartbeat = false
        var onTermination: (@Sendable (StreamEnd) -> Void)?
        var timers: [Task<Void, Never>] = []
        /// The backlog this writer pulls from (see `pull`), until it has
        /// delivered it all.
        var refill: Refill?
        /// Whether a refill is running (there is never more than one).
        var refilling = false
        /// A paced write waiting for the client to take enough (see
        /// `writePaced`); resumed when the queue falls to `pacedLevel` or
        /// the stream ends.
        var roomWaiter: CheckedContinuation<Void, Never>?
    }

    /// Heartbeat, buffer limit and drop behaviour of this writer.
    public let configuration: StreamConfiguration
    /// Taken by the thread that writes and by libmicrohttpd's polling
    /// thread at every write and read: a sleeping lock (see `SleepingMutex`).
    let state: SleepingMutex<State>

    /// A writer; `onTermination` runs exactly once when the stream ends.
    public init(
        configuration: StreamConfiguration = StreamConfiguration(),
        onTermination: (@Sendable (StreamEnd) -> Void)? = nil
    ) {
        self.configuration = configuration
        var initial = State()
        initial.onTermination = onTermination
        self.state = SleepingMutex(initial)
    }

    /// Queues `bytes` for the client. Returns false if the stream is no
    /// longer open (finished, ended, or just dropped for being too slow):
    /// the caller can forget this writer.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        let (written, control) = state.withLock { state -> (Bool, ConnectionControl?) in
            guard case .open = state.phase else { return (false, nil) }
            guard !bytes.isEmpty else { return (true, nil) }
            if state.bufferedBytes + bytes.count > configuration.maxBufferedBytes {
                drop(&state)
                return (false, nil)
            }
            state.chunks.append(bytes)
            state.bufferedBytes += bytes.count
            state.wroteSinceHeartbeat = true
            return (true, state.control)
        }
        // Outside the lock, which the polling thread's `read` takes: the
        // resume enters libmicrohttpd and wakes its thread, which must not
        // find the lock still held by this one. No wake-up is lost:
        // `read` suspends under the lock only when nothing is queued, so a
        // chunk queued before it is read, and one queued after it finds
        // the connection suspended and resumes it here, or at the end of
        // this thread's turn (`resumeDeferred`).
        if let control {
            if let batch = DeferredResumes.current { batch.add(control) } else { control.resume() }
        }
        return written
    }

    /// Resumes the connections that writes on this thread have written
    /// since the last call, and from now on puts off the resumes of this
    /// thread's writes until its next call. For a thread that works in
    /// turns (an event loop that handles many messages per wake-up), called
    /// at the end of every turn by the loop's owner (for a D-Bus connection:
    /// `Connection.Configuration.endOfTurn`): a connection written many
    /// times in a turn then wakes libmicrohttpd's thread once, for all of it.
    public static func resumeDeferred() {
        DeferredResumes.ofThisThread.resumeAll()
    }

    /// Queues one event.
    @discardableResult
    public func write(_ event: ServerSentEvent) -> Bool { write(event.encoded) }

    /// Queues a comment (ignored by SSE clients).
    @discardableResult
    public func writeComment(_ text: String) -> Bool { write(ServerSentEvent.comment(text)) }

    /// Ends the stream from the server side: what is buffered is still sent,
    /// then the body ends. Later writes return false.
    public func finish() { finish(.finished) }

    /// Queues `event` as the stream's last and ends the stream, in one step:
    /// no write from another thread can come between the two, so the event
    /// is the last thing the client reads. Does nothing if the stream is no
    /// longer open.
    public func finish(with event: ServerSentEvent) {
        let bytes = event.encoded
        state.withLock { state in
            guard case .open = state.phase else { return }
            state.chunks.append(bytes)
            state.bufferedBytes += bytes.count
            state.phase = .finishing(.finished)
            state.control?.resume()
        }
    }

    /// Whether writes are still accepted.
    public var isOpen: Bool {
        state.withLock { state in
            if case .open = state.phase { return true }
            return false
        }
    }

    /// Bytes queued and not yet handed to the connection.
    public var bufferedByteCount: Int { state.withLock { $0.bufferedBytes } }
}
