import CMicroHTTPD
import Logging

// MHD's access handler, stage by stage. Polling thread only.
extension Exchange {
    /// One call of the access handler for this request.
    func access(
        method: String, version: String, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        switch state.withLock({ $0.stage }) {
        case .headers:
            return firstCall(method: method, version: version)
        case .body:
            if uploadSize.pointee > 0 {
                let result = receive(upload, count: uploadSize.pointee)
                uploadSize.pointee = 0
                return result
            }
            return dispatch()
        case .handling:
            return answer()
        case .responded:
            return MHD_Result.YES
        }
    }

    /// Sets up the request and refuses what can be refused from the headers
    /// alone. Answering here makes MHD close the connection after the
    /// response, which is what a refused upload needs anyway.
    ///
    /// A body declared too large is refused at once only when the client
    /// waits for `100 Continue` before sending it, or declares more than
    /// twice the limit. Otherwise the client is already sending it, and
    /// closing with its bytes unread makes the kernel reset the connection:
    /// the client may see a broken pipe instead of the 413. Such a body is
    /// read and dropped, and the 413 follows it.
    ///
    /// Before any body is read, the responder judges the head
    /// (`Responder.admitsBody`, where the API key is checked): a head it
    /// refuses is answered by the responder at once, its body left unread.
    /// A declared body that the `BodyBudget` cannot hold is refused (503) at
    /// once too: better a client that may see a reset than memory taken.
    private func firstCall(method: String, version: String) -> MHD_Result {
        state.withLock { state in
            state.stage = .body
            state.method = Method(method)
            state.version = version
        }
        let configuration = core.configuration
        if !admitted {
            return queue(core.errorResponse(HTTPError(.serviceUnavailable, "server is stopping"), request: headOnly()))
        }
        if let refusal = core.connections.refusal(for: control) {
            let error = HTTPError(.serviceUnavailable, refusal, headers: ["Retry-After": "1"])
            let head = Request(method: Method(method), target: target, version: version)
            return queue(closing(core.errorResponse(error, request: head)))
        }
        if target.utf8.count > configuration.maxHeaderSize {
            let error = HTTPError(.uriTooLong, "the request target exceeds \(configuration.maxHeaderSize) bytes")
            return queue(closing(core.errorResponse(error, request: headOnly())))
        }
        let headerSize = cmhd_connection_header_size(control.connection.pointer)
        if headerSize > configuration.maxHeaderSize {
            let error = HTTPError(.requestHeaderFieldsTooLarge, "request headers exceed \(configuration.maxHeaderSize) bytes")
            return queue(core.errorResponse(error, request: headOnly()))
        }
        let headers = Self.headers(of: control.connection.pointer)
        if headers.count > configuration.maxHeaderFields {
            let error = HTTPError(
                .requestHeaderFieldsTooLarge, "the request has more than \(configuration.maxHeaderFields) header fields")
            return queue(core.errorResponse(error, request: headOnly()))
        }
        if let violation = MessageFraming.violation(in: headers, version: version) {
            let head = Request(method: Method(method), target: target, headers: headers, version: version)
            return queue(closing(core.errorResponse(HTTPError(.badRequest, violation), request: head)))
        }
        let remote = cmhd_connection_client_address(control.connection.pointer).flatMap { SocketAddress($0) }
        state.withLock { state in
            state.headers = headers
            state.remote = remote
        }
        // A Content-Length that does not parse is MHD's business (it answers
        // 400); one that parses but is too big is ours.
        let length = headers["Content-Length"].flatMap { Int($0) }
        guard (length ?? 0) > 0 || headers["Transfer-Encoding"] != nil else { return MHD_Result.YES }
        let head = Request(method: Method(method), target: target, headers: headers, version: version, remoteAddress: remote)
        if !core.responder.admitsBody(of: head) {
            state.withLock { $0.bodySkipped = true }
            return dispatch()
        }
        if let length {
            if length > configuration.maxRequestBodySize {
                let waitsForContinue = headers["Expect"]?.lowercased() == "100-continue"
                if waitsForContinue || length > 2 * configuration.maxRequestBodySize {
                    return queue(core.errorResponse(bodyTooLarge(), request: headOnly()))
                }
                state.withLock { $0.discarded = 0 }
            } else if let full = core.bodies.reserve(length, for: Self.budgetKey(remote)) {
                return queue(closing(core.errorResponse(bodyBudgetExhausted(full), request: head)))
            } else {
                state.withLock { state in
                    state.reserved = length
                    state.body.reserveCapacity(length)
                }
            }
        }
        startBodyDeadline()
        return MHD_Result.YES
    }

    /// Appends a piece of the body, or discards it once the body went over
    /// the limit (or was declared over it) or out of the body budget.
    /// libmicrohttpd 0.9.75 refuses to queue a response while it is still
    /// reading a body, so such a body gets its 413 (or 503) once it ends;
    /// it is counted and dropped (memory stays bounded) and an upload still
    /// going at twice the limit has its connection closed instead.
    private func receive(_ upload: UnsafePointer<CChar>?, count: Int) -> MHD_Result {
        let limit = core.configuration.maxRequestBodySize
        let (result, start, received) = state.withLock { state in
            state.bodyReceived += count
            return (receive(upload, count: count, limit: limit, into: &state), state.bodyStart, state.bodyReceived)
        }
        extendBodyDeadline(start: start, received: received)
        return result
    }

    private func receive(
        _ upload: UnsafePointer<CChar>?, count: Int, limit: Int, into state: inout State
    ) -> MHD_Result {
        if let discarded = state.discarded {
            state.discarded = discarded + count
            return discarded + count > 2 * limit ? MHD_Result.NO : MHD_Result.YES
        }
        let needed = state.body.count + count
        guard needed <= limit else {
            state.discarded = needed
            state.body = []
            return MHD_Result.YES
        }
        // A body of unannounced length (chunked) takes budget as it grows.
        if needed > state.reserved {
            if let full = core.bodies.reserve(needed - state.reserved, for: Self.budgetKey(state.remote)) {
                state.bodyRefusal = bodyBudgetExhausted(full)
                state.discarded = needed
                state.body = []
                return MHD_Result.YES
            }
            state.reserved = needed
        }
        if let upload {
            state.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: count))
        }
        return MHD_Result.YES
    }

    /// The body's deadline: `requestBodyTimeout` from the end of the head,
    /// one second later for every `minimumRequestBodyRate` bytes received.
    private func startBodyDeadline() {
        let timeout = core.configuration.requestBodyTimeout
        guard timeout > .zero else { return }
        let now = ContinuousClock.now
        state.withLock { $0.bodyStart = now }
        core.connections.setDeadline(now + timeout, for: control)
    }

    private func extendBodyDeadline(start: ContinuousClock.Instant?, received: Int) {
        guard let start else { return }
        let rate = max(1, core.configuration.minimumRequestBodyRate)
        let earned = Duration.milliseconds(Int64(received) * 1000 / Int64(rate))
        core.connections.setDeadline(start + core.configuration.requestBodyTimeout + earned, for: control)
    }

    private func bodyBudgetExhausted(_ reason: String) -> HTTPError {
        HTTPError(.serviceUnavailable, "\(reason); try again later", headers: ["Retry-After": "1"])
    }

    private func bodyTooLarge() -> HTTPError {
        HTTPError(.contentTooLarge, "request body exceeds \(core.configuration.maxRequestBodySize) bytes")
    }

    /// The whole request is in: build it, suspend the connection, and run
    /// the responder on a task that delivers its response.
    private func dispatch() -> MHD_Result {
        let (bodyStart, discarded, bodyRefusal) = state.withLock { ($0.bodyStart, $0.discarded, $0.bodyRefusal) }
        if bodyStart != nil { core.connections.setDeadline(nil, for: control) }
        if discarded != nil {
            return queue(closing(core.errorResponse(bodyRefusal ?? bodyTooLarge(), request: headOnly())))
        }
        let request: Request = state.withLock { state in
            state.stage = .handling
            let request = Request(
                method: state.method, target: target, headers: state.headers, body: state.body,
                version: state.version, remoteAddress: state.remote)
            state.body = []
            state.headers = Headers()
            state.request = request
            return request
        }
        guard control.suspend() else {
            return queue(core.errorResponse(HTTPError(.serviceUnavailable, "server is stopping"), request: request))
        }
        let core = self.core
        let task = Task { [self] in
            let response: Response
            do {
                response = try await core.responder.respond(to: request)
            } catch {
                if !(error is HTTPError) && !(error is any ResponseConvertibleError) {
                    core.logger.error("handler failed", metadata: [
                        "request": "\(request.method) \(self.loggedTarget)", "error": "\(error)",
                    ])
                }
                response = core.configuration.errorResponses.response(for: error, request: request)
            }
            deliver(response)
        }
        state.withLock { state in
            if !state.completed { state.handler = task }
        }
        return MHD_Result.YES
    }

    /// Called again after `deliver` resumed the connection: queue the
    /// handler's response. Without one (woken by `stop` before the handler
    /// finished) answer 503 if stopping, or wait again.
    private func answer() -> MHD_Result {
        let (pending, request) = state.withLock { state in
            defer { state.pending = nil }
            // The handler is done once it delivered: its finished Task
            // still holds the memory the task allocated, for as long as
            // the response lasts (hours, for a stream).
            if state.pending != nil { state.handler = nil }
            return (state.pending, state.request)
        }
        if let pending {
            let result = queue(state.withLock { $0.bodySkipped } ? closing(pending) : pending)
            // Nothing answers for this request any more.
            state.withLock { $0.request = nil }
            return result
        }
        if !core.isStopping && control.suspend() { return MHD_Result.YES }
        return queue(core.errorResponse(HTTPError(.serviceUnavailable, "server is stopping"), request: request))
    }

    /// `response` with `Connection: close`: the request's framing or its
    /// connection cannot be trusted with another request.
    /// The request as far as its head goes, for an answer given before the
    /// body (refusals name the request they answer).
    private func headOnly() -> Request {
        let method = state.withLock { $0.method }
        return Request(method: method, target: target, headers: Self.headers(of: control.connection.pointer))
    }

    private func closing(_ response: Response) -> Response {
        var response = response
        response.headers.replaceOrAdd(name: "Connection", value: "close")
        return response
    }

    /// Every request header, in order.
    static func headers(of connection: OpaquePointer) -> Headers {
        var fields: [(String, String)] = []
        withUnsafeMutablePointer(to: &fields) { pointer in
            _ = MHD_get_connection_values_n(connection, MHD_ValueKind.HEADER_KIND, { cls, _, key, keySize, value, valueSize in
                guard let cls, let key else { return MHD_Result.YES }
                let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
                let text = value.map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self)
                } ?? ""
                cls.assumingMemoryBound(to: [(String, String)].self).pointee.append((name, text))
                return MHD_Result.YES
            }, pointer)
        }
        return Headers(fields)
    }
}
