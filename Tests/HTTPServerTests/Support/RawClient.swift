import Foundation
import Glibc

/// A minimal blocking HTTP/1.1 client over a plain socket, for what curl
/// cannot show: several requests on one connection, chunked uploads, a
/// client that never reads, and streams read event by event.
// @unchecked Sendable: a RawClient is used by one thread at a time; tests
// hand it from one `blocking` section to the next, never concurrently.
final class RawClient: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Head {
        var status: Int
        var headers: [(String, String)]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var isChunked: Bool { header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false }
    }

    struct Message {
        var head: Head
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private(set) var socket: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port` (IPv4 or IPv6 numeric host). `receiveBuffer`
    /// shrinks SO_RCVBUF before connecting (for slow-client tests).
    /// `source` binds the local end to that IPv4 address first (another
    /// loopback address, to be a different client).
    init(
        host: String = "127.0.0.1", port: Int, receiveBuffer: Int? = nil, timeout: Double = 10, source: String? = nil
    ) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        socket = Glibc.socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if let receiveBuffer {
            var size = Int32(receiveBuffer)
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        setTimeout(timeout)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                Glibc.close(socket)
                throw Failure(description: "bind \(source): errno \(errno)")
            }
        }
        guard connect(socket, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(socket)
            throw Failure(description: "connect: errno \(code)")
        }
    }

    deinit { close() }

    func setTimeout(_ seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    func close() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    /// Closes the sending side only (the request is complete; the
    /// response is still wanted).
    func shutdownWrite() {
        _ = Glibc.shutdown(socket, Int32(SHUT_WR))
    }

    /// Reads until the server closes (or resets) the connection, true, or
    /// the receive timeout passes first, false; what arrived is discarded.
    func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += count
        }
    }

    /// Sends a request with `Host` and optional body.
    func request(_ method: String, _ target: String, headers: [String] = [], body: String? = nil) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        for header in headers { text += header + "\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        try send(text)
    }

    /// Reads one full response (Content-Length or chunked body; none for HEAD).
    func readResponse(head isHead: Bool = false) throws -> Message {
        let head = try readHead()
        if isHead || head.status == 204 || head.status == 304 { return Message(head: head, body: []) }
        if head.isChunked {
            var body: [UInt8] = []
            while let chunk = try readChunk() { body += chunk }
            return Message(head: head, body: body)
        }
        let length = Int(head.header("Content-Length") ?? "0") ?? 0
        return Message(head: head, body: try readExactly(length))
    }

    func readHead() throws -> Head {
        let text = String(decoding: try readUntil([13, 10, 13, 10]), as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw Failure(description: "empty head") }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Head(status: status, headers: headers)
    }

    /// One chunk of a chunked body; nil after the last (zero-size) chunk.
    func readChunk() throws -> [UInt8]? {
        let sizeLine = String(decoding: try readUntil([13, 10]), as: UTF8.self)
        let hex = sizeLine.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        guard let size = Int(hex, radix: 16) else { throw Failure(description: "bad chunk size \(sizeLine)") }
        if size == 0 {
            _ = try readUntil([13, 10])
            return nil
        }
        let chunk = try readExactly(size)
        _ = try readExactly(2)
        return chunk
    }

    /// Reads until the connection closes or times out; returns what came.
    func readToEnd() -> [UInt8] {
        var all = buffer
        buffer = []
        while let more = try? fill(), !more.isEmpty { all += more }
        return all
    }

    func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { buffer += try fillOrThrow() }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    func readUntil(_ delimiter: [UInt8]) throws -> [UInt8] {
        var searchFrom = 0
        while true {
            if let range = find(delimiter, from: searchFrom) {
                defer { buffer.removeFirst(range) }
                return Array(buffer[0..<range])
            }
            searchFrom = max(0, buffer.count - delimiter.count + 1)
            buffer += try fillOrThrow()
        }
    }

    private func find(_ delimiter: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= delimiter.count else { return nil }
        var index = start
        while index + delimiter.count <= buffer.count {
            if buffer[index..<(index + delimiter.count)].elementsEqual(delimiter) { return index + delimiter.count }
            index += 1
        }
        return nil
    }

    private func fillOrThrow() throws -> [UInt8] {
        let bytes = try fill()
        guard !bytes.isEmpty else { throw Failure(description: "connection closed") }
        return bytes
    }

    /// One recv; empty at end of stream, throws on timeout or error.
    private func fill() throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw Failure(description: errno == EAGAIN ? "timed out" : "recv: errno \(errno)") }
        return Array(chunk[0..<count])
    }
}
