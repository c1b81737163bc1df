import AsyncPrimitives
import CMicroHTTPD
import Logging
import Synchronization

/// One request on one connection, from its request line to MHD's
/// "request completed" callback.
///
/// Created by the URI-log callback (so the raw target is kept), owned by
/// MHD through the request's context pointer (one retain, released in the
/// completed callback) and by the content reader of a streaming response
/// (another retain, released by the reader's free callback).
///
/// The handler runs on a task while the connection is suspended; the task
/// stores its response in `pending` and resumes the connection; MHD then
/// calls the access handler again, which queues the response. Answering on
/// a later call than the first keeps the connection alive for the next
/// request.
final class Exchange: Sendable {
    enum Stage {
        /// Before the first access-handler call.
        case headers
        /// Receiving the body (or about to dispatch if there is none).
        case body
        /// The handler is running; the connection is suspended.
        case handling
        /// A response is queued.
        case responded
    }

    struct State {
        var stage = Stage.headers
        var method = Method.get
        var version = ""
        /// Every header field, read once the head is in.
        var headers = Headers()
        var body: [UInt8] = []
        /// Body bytes dropped, once the body went (or was declared) over
        /// the limit or out of the body budget: every byte of it so far.
        var discarded: Int?
        /// Why a dropped body is refused (nil: it is too large, a 413).
        var bodyRefusal: HTTPError?
        /// The head was refused (`Responder.admitsBody`): the body is left
        /// unread, and the connection closed after the answer.
        var bodySkipped = false
        /// The end of the head, where the body's deadline counts from.
        var bodyStart: ContinuousClock.Instant?
        /// Body bytes received so far, dropped ones included.
        var bodyReceived = 0
        /// Bytes this request holds in the server's `BodyBudget`.
        var reserved = 0
        /// The client, as the socket reported it.
        var remote: SocketAddress?
        var request: Request?
        /// The handler's response, waiting for the access handler.
        var pending: Response?
        var handler: Task<Void, Never>?
        var status: Status?
        var writer: StreamWriter?
        /// MHD reported the request complete.
        var completed = false
    }

    let core: ServerCore
    let control: ConnectionControl
    let target: String
    let started = ContinuousClock.now
    /// Whether the request began before `stop`: those are served (within
    /// the grace period); later ones on open connections get 503.
    let admitted: Bool
    let state = Mutex(State())

    /// Polling thread (URI-log callback).
    init(core: ServerCore, connection: OpaquePointer, target: String) {
        self.core = core
        self.control = ConnectionControl(connection: connection)
        self.target = target
        self.admitted = !core.isStopping
    }

    /// Stores the handler's response and wakes the connection; any thread.
    /// A response for a request that is already over is discarded (its
    /// stream, if any, ends as disconnected).
    func deliver(_ response: Response) {
        if case .bytes(let body) = response.body, replyToHalfClosedPeer(response, body: body) {
            control.resume()
            return
        }
        let accepted: Bool = state.withLock { state in
            guard !state.completed else { return false }
            state.pending = response
            return true
        }
        guard accepted else {
            if case .stream(let writer) = response.body { writer.terminate(.clientDisconnected) }
            return
        }
        control.resume()
    }

    /// Sends `response` itself if the client half-closed (libmicrohttpd
    /// would drop the connection unanswered: see `HalfClosedReply`). Not
    /// over TLS, whose records only libmicrohttpd's session can write (and
    /// whose clients end with close_notify, not a bare half-close).
    private func replyToHalfClosedPeer(_ response: Response, body: [UInt8]) -> Bool {
        guard core.configuration.tls == nil else { return false }
        let isHead = state.withLock { $0.method == .head }
        let timeout = core.configuration.idleTimeout > .zero ? core.configuration.idleTimeout : .seconds(10)
        let replied = control.replyIfPeerHalfClosed(timeout: timeout) {
            HalfClosedReply.encode(response, body: body, isHead: isHead)
        }
        guard replied else { return false }
        state.withLock { state in
            state.stage = .responded
            state.status = response.status
        }
        return true
    }

    /// The server is stopping: end an attached stream (after what it has
    /// buffered); handlers get until the grace period ends.
    func serverStopping() {
        state.withLock { $0.writer }?.finish(.serverStopped)
    }

    /// MHD's content reader for a streaming response; polling thread.
    func readStream(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let writer = state.withLock({ $0.writer }) else {
            return Int(CMHD_CONTENT_READER_END_WITH_ERROR)
        }
        return writer.read(into: buffer, serverStopping: core.isStopping)
    }

    /// MHD's "request completed" callback; polling thread. Runs once.
    func completed(_ code: MHD_RequestTerminationCode) {
        control.markFinished()
        core.hangups.unwatch(control)
        core.connections.requestCompleted(control)
        let (writer, pending, handler, method, version, status, reserved, remote) = state.withLock { state in
            state.completed = true
            defer {
                state.pending = nil
                state.handler = nil
                state.reserved = 0
            }
            return (
                state.writer, state.pending, state.handler, state.method, state.version, state.status, state.reserved,
                state.remote
            )
        }
        core.bodies.release(reserved, for: Self.budgetKey(remote))
        // A client that left while its handler ran: let the handler know.
        handler?.cancel()
        if case .stream(let orphan)? = pending?.body { orphan.terminate(.clientDisconnected) }
        writer?.connectionCompleted(code)
        core.unregister(self)
        log(method: method, version: version, status: status, code: code)
    }

    private func log(method: Method, version: String, status: Status?, code: MHD_RequestTerminationCode) {
        core.logger.debug("request finished", metadata: [
            "request": "\(method) \(loggedTarget) \(version)",
            "status": "\(status?.code ?? 0)",
            "duration_ms": "\((ContinuousClock.now - started).milliseconds)",
            "end": "\(Self.describe(code))",
        ])
    }

    /// The client address a body's memory is counted against.
    static func budgetKey(_ remote: SocketAddress?) -> String { remote?.host ?? "?" }

    /// The target as logs show it: secrets in the query redacted.
    var loggedTarget: String {
        RequestTarget.redacting(target, parameters: core.configuration.redactedQueryParameters)
    }

    static func describe(_ code: MHD_RequestTerminationCode) -> String {
        switch code {
        case .REQUEST_TERMINATED_COMPLETED_OK: "ok"
        case .REQUEST_TERMINATED_WITH_ERROR: "error"
        case .REQUEST_TERMINATED_TIMEOUT_REACHED: "timeout"
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: "shutdown"
        case .REQUEST_TERMINATED_READ_ERROR: "read-error"
        case .REQUEST_TERMINATED_CLIENT_ABORT: "client-abort"
        default: "code-\(code.rawValue)"
        }
    }
}
