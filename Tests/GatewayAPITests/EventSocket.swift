import Foundation
import Glibc
import TestSupport

/// A blocking `text/event-stream` client over a plain socket to
/// 127.0.0.1: sends one GET, then hands out the events one at a time as it
/// reads them (de-chunking the body), at the pace the test asks.
// @unchecked Sendable: used by one thread at a time; tests hand it from
// one `blocking` section to the next, never concurrently.
final class EventSocket: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let socket: Int32
    /// Bytes read and not yet de-chunked, from `rawStart` on.
    private var raw: [UInt8] = []
    private var rawStart = 0
    /// The de-chunked body, from `bodyStart` on.
    private var body: [UInt8] = []
    private var bodyStart = 0
    /// The bytes left in the chunk being read; nil between chunks.
    private var chunkLeft: Int?
    private(set) var status = 0
    private(set) var ended = false

    /// Connects to 127.0.0.1:`port` and sends `GET target`; reads the head.
    init(port: Int, target: String, headers: [String] = []) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw Failure(description: "connect: errno \(errno)")
        }
        let request = (["GET \(target) HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        try readHead()
    }

    deinit { Glibc.close(socket) }

    /// The next event or comment block; nil once the stream has ended.
    func next() throws -> ReceivedEvent? {
        while true {
            if let event = takeEvent() { return event }
            if ended { return nil }
            try readChunked()
        }
    }

    /// The next event that is not a comment; nil once the stream has ended.
    func nextEvent() throws -> ReceivedEvent? {
        while let event = try next() {
            if !event.isComment { return event }
        }
        return nil
    }

    private func readHead() throws {
        while true {
            if let end = find([13, 10, 13, 10], in: raw, from: rawStart) {
                let head = String(decoding: raw[rawStart..<end], as: UTF8.self)
                rawStart = end + 4
                status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                guard head.lowercased().contains("transfer-encoding: chunked") else {
                    throw Failure(description: "not a chunked stream:\n\(head)")
                }
                return
            }
            guard try receive() else { throw Failure(description: "closed before the head") }
        }
    }

    /// Reads from the socket and moves whole chunk data into `body`.
    private func readChunked() throws {
        if try !receive() {
            ended = true
            return
        }
        while true {
            if let left = chunkLeft {
                let available = min(left, raw.count - rawStart)
                body += raw[rawStart..<(rawStart + available)]
                rawStart += available
                if available < left {
                    chunkLeft = left - available
                    break
                }
                // The CRLF after the chunk's data.
                guard raw.count - rawStart >= 2 else {
                    chunkLeft = 0
                    break
                }
                rawStart += 2
                chunkLeft = nil
            }
            guard let lineEnd = find([13, 10], in: raw, from: rawStart) else { break }
            let sizeText = String(decoding: raw[rawStart..<lineEnd], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else {
                throw Failure(description: "bad chunk size '\(sizeText)'")
            }
            rawStart = lineEnd + 2
            if size == 0 {
                ended = true
                break
            }
            chunkLeft = size
        }
        if rawStart > 65536 {
            raw.removeFirst(rawStart)
            rawStart = 0
        }
    }

    private func receive() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket, &buffer, buffer.count, 0)
        if count < 0 { throw Failure(description: "recv: errno \(errno)") }
        if count == 0 { return false }
        raw += buffer[0..<count]
        return true
    }

    private func takeEvent() -> ReceivedEvent? {
        guard let end = find([10, 10], in: body, from: bodyStart) else { return nil }
        let block = String(decoding: body[bodyStart..<end], as: UTF8.self)
        bodyStart = end + 2
        if bodyStart > 65536 {
            body.removeFirst(bodyStart)
            bodyStart = 0
        }
        return ReceivedEvent(block: block)
    }

    private func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], needle.indices.allSatisfy({ bytes[index + $0] == needle[$0] }) { return index }
            index += 1
        }
        return nil
    }
}
