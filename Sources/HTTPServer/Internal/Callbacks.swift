import CMicroHTTPD
import Glibc
import Logging

// The C entry points libmicrohttpd calls, all on its polling thread. Each
// turns its context pointer back into the Swift object and forwards.
// `cls` is always the ServerCore (unretained: the Daemon keeps it alive);
// a request's context pointer is its Exchange (retained: see Exchange).

/// MHD_OPTION.URI_LOG_CALLBACK: the first sight of a request. Its return
/// value becomes the request's context pointer.
func uriLogCallback(
    cls: UnsafeMutableRawPointer?, uri: UnsafePointer<CChar>?, connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let cls, let connection else { return nil }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let exchange = Exchange(core: core, connection: connection, target: uri.map { String(cString: $0) } ?? "/")
    core.register(exchange)
    if let uri { hideQueryFromParser(uri) }
    return Unmanaged.passRetained(exchange).toOpaque()
}

/// Ends the query string MHD is about to parse right after its `?`, so
/// MHD parses no query arguments.
///
/// The query is parsed from the target kept above (`RequestTarget`), never
/// from MHD's argument table, which costs an entry of its connection's
/// memory pool per argument: a few hundred short arguments, well inside
/// `maxHeaderSize`, exhausted the pool and MHD closed the connection
/// unanswered. MHD calls this callback "before we modify URI *or* args"
/// (connection.c, parse_initial_message_line), with `uri` pointing into its
/// own writable read buffer and the `?` already found: it then writes a NUL
/// over the `?` and parses what follows it, here the empty string.
private func hideQueryFromParser(_ uri: UnsafePointer<CChar>) {
    guard let question = strchr(uri, Int32(UInt8(ascii: "?"))) else { return }
    UnsafeMutablePointer(mutating: question + 1).pointee = 0
}

/// The access handler, called at least twice per request.
func accessHandlerCallback(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let opaque = context.pointee, let uploadDataSize else { return MHD_Result.NO }
    let exchange = Unmanaged<Exchange>.fromOpaque(opaque).takeUnretainedValue()
    return exchange.access(
        method: method.map { String(cString: $0) } ?? "GET",
        version: version.map { String(cString: $0) } ?? "",
        upload: uploadData, uploadSize: uploadDataSize)
}

/// MHD_OPTION.NOTIFY_COMPLETED: the request is over (sent, failed, timed
/// out, or the daemon is stopping). Called once per request whose URI-log
/// callback ran.
func requestCompletedCallback(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_RequestTerminationCode
) {
    guard let context, let opaque = context.pointee else { return }
    context.pointee = nil
    Unmanaged<Exchange>.fromOpaque(opaque).takeRetainedValue().completed(code)
}

/// MHD_OPTION.NOTIFY_CONNECTION: a connection was accepted or is about to
/// be closed (its socket is still open).
func connectionNotifyCallback(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED: core.connections.started(connection)
    case .CONNECTION_NOTIFY_CLOSED: core.connections.closed(connection)
    default: return
    }
    core.reclaimer.connectionsChanged(open: core.connections.openCount)
}

/// The content reader of a streaming response.
func streamReaderCallback(
    cls: UnsafeMutableRawPointer?, position: UInt64, buffer: UnsafeMutablePointer<CChar>?, max: Int
) -> Int {
    guard let cls, let buffer else { return Int(CMHD_CONTENT_READER_END_WITH_ERROR) }
    let exchange = Unmanaged<Exchange>.fromOpaque(cls).takeUnretainedValue()
    return exchange.readStream(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

/// Frees the streaming response's hold on its exchange.
func streamReaderFreeCallback(cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<Exchange>.fromOpaque(cls).release()
}

/// libmicrohttpd's log lines (formatted by the shim's trampoline).
func daemonLogCallback(cls: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) {
    guard let cls, let message else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    var text = String(cString: message)
    while text.last?.isNewline == true { text.removeLast() }
    core.lastDaemonMessage.withLock { $0 = text }
    // Mostly per-connection trouble (a client that reset its socket), so not
    // an error of the server's; start-up failures are logged by `start`.
    core.logger.notice("libmicrohttpd: \(text)")
}
