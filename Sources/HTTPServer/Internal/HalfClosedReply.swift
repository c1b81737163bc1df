import AsyncPrimitives
import Glibc

/// Sends a complete response to a client that closed its sending side
/// (shutdown(SHUT_WR)) after its request, which libmicrohttpd 0.9.75
/// cannot do.
///
/// A connection suspended from the access handler keeps polling for input
/// (MHD_connection_update_event_loop_info skips suspended connections), so
/// on resume libmicrohttpd reads the client's end of stream before it
/// writes anything, and MHD_connection_handle_read closes a connection that
/// reads end of stream in any state, answer or not. So when a handler's
/// response is ready and the client is found half-closed, the response is
/// written here, on the suspended connection (libmicrohttpd does not touch
/// its socket meanwhile), with `Connection: close`; resuming then lets
/// libmicrohttpd read the end of stream and close the connection.
enum HalfClosedReply {
    /// Header fields this writer sets itself.
    private static let ownHeaders: Set<String> = ["content-length", "transfer-encoding", "connection", "date"]

    /// Whether the peer has closed its sending side with nothing unread
    /// before the end of stream.
    static func peerHalfClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }

    /// The response's bytes on the wire: status line, head and body.
    static func encode(_ response: Response, body: [UInt8], isHead: Bool) -> [UInt8] {
        let status = response.status
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nDate: \(httpDate())\r\n"
        for field in response.headers where !ownHeaders.contains(field.name.lowercased()) {
            head += "\(field.name): \(field.value)\r\n"
        }
        let bodyless = isHead || status.code == 204 || status.code == 304 || status.code < 200
        if status.code != 204 && status.code != 304 && status.code >= 200 {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (bodyless ? [] : body)
    }

    /// Writes all of `bytes` to a non-blocking socket, waiting for room up
    /// to `timeout`; false if the socket failed or stayed full.
    static func write(_ bytes: [UInt8], to socket: Int32, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return false }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var writable = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            _ = poll(&writable, 1, Int32(clamping: max(1, left.milliseconds)))
        }
        return true
    }

    /// The current time as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    private static func httpDate() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
