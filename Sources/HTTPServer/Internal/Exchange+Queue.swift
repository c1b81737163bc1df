import CMicroHTTPD
import Logging

// Turning a Response into an MHD response and queueing it. Polling thread.
extension Exchange {
    /// Header fields MHD derives from the body itself; a handler's copy
    /// would contradict MHD's framing.
    private static let framingHeaders: Set<String> = ["content-length", "transfer-encoding"]

    /// The buffer libmicrohttpd allocates with a streaming response. A
    /// chunked body (HTTP/1.1) is read straight into the connection's
    /// memory pool and never uses it; only an HTTP/1.0 client's body is
    /// read through it, in pieces of this size. Each open stream holds one,
    /// so it is small.
    private static let streamBlockSize = 512

    /// Queues `response` on the connection. MHD_Result.NO tells MHD to close it.
    func queue(_ response: Response) -> MHD_Result {
        let connection = control.connection.pointer
        var response = response
        if core.isStopping { response.headers.replaceOrAdd(name: "Connection", value: "close") }
        if core.configuration.tls != nil, response.headers["Strict-Transport-Security"] == nil {
            response.headers.replaceOrAdd(name: "Strict-Transport-Security", value: TLSConfiguration.strictTransportSecurity)
        }
        let created: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            created = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
            }
        case .stream(let writer):
            // libmicrohttpd 0.9.75 writes the chunked terminator ("0\r\n\r\n")
            // after the head of a HEAD response of unknown length, which would
            // corrupt the next response on the connection: close it instead.
            if state.withLock({ $0.method == .head }) {
                response.headers.replaceOrAdd(name: "Connection", value: "close")
            }
            guard writer.attach(control) else {
                let request = state.withLock { $0.request }
                let error = HTTPError(.internalServerError, "a StreamWriter can serve only one response")
                core.logger.error("stream writer reused", metadata: ["request": "\(loggedTarget)"])
                return queue(core.errorResponse(error, request: request))
            }
            state.withLock { $0.writer = writer }
            core.hangups.watch(control)
            // The reader holds the exchange until MHD frees the response.
            let context = Unmanaged.passRetained(self)
            created = MHD_create_response_from_callback(
                CMHD_SIZE_UNKNOWN, Self.streamBlockSize, streamReaderCallback, context.toOpaque(),
                streamReaderFreeCallback)
            if created == nil { context.release() }
        }
        guard let created else {
            core.logger.error("cannot create a response", metadata: ["request": "\(loggedTarget)"])
            return MHD_Result.NO
        }
        defer { MHD_destroy_response(created) }
        for field in response.headers where !Self.framingHeaders.contains(field.name.lowercased()) {
            if MHD_add_response_header(created, field.name, field.value) == MHD_Result.NO {
                core.logger.error("invalid response header dropped", metadata: ["name": "\(field.name)"])
            }
        }
        let status = (100...999).contains(response.status.code) ? response.status : .internalServerError
        state.withLock { state in
            state.stage = .responded
            state.status = status
        }
        return MHD_queue_response(connection, UInt32(status.code), created)
    }
}
