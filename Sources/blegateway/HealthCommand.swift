import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import HTTPServer

/// `blegateway health`: asks a running gateway's `/health` and exits 0 when
/// it answers 200 (`ok`, or `degraded`: the adapter is off, which a client
/// can fix), 1 otherwise (503: the bus, bluetoothd or the adapter is
/// missing; or no answer). Prints the state and what it means. For
/// container health checks, where no HTTP client is installed.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that a gateway answers on /health with 200 (exit 0) or not (exit 1).")

    @Option(
        help: ArgumentHelp(
            "The gateway's base URL, or its /health URL (http or https).",
            discussion: "http://HOST:PORT checks http://HOST:PORT/health; a path is kept, with /health added unless it ends so."))
    var url = "http://127.0.0.1:8080"

    @Flag(help: "With https, accept any certificate (a self-signed one on the gateway's own --tls-cert).")
    var insecure = false

    @Option(help: "Give up after this many seconds.")
    var timeout: Double = 3

    func run() async throws {
        guard let target = HealthTarget(url) else {
            throw ValidationError("--url must look like http(s)://HOST:PORT or http(s)://HOST:PORT/PATH, not '\(url)'")
        }
        let answer: (status: Int, body: [UInt8])?
        do {
            answer = try target.fetch(timeoutMilliseconds: Int32(max(0.1, timeout) * 1000), verify: !insecure)
        } catch {
            print("unhealthy: TLS with \(url) failed: \(error)" + (insecure ? "" : " (--insecure accepts a self-signed certificate)"))
            throw ExitCode.failure
        }
        let report = answer.flatMap { Self.summary(of: $0.body) }
        guard let answer, answer.status == 200 else {
            print(answer.map { "unhealthy: HTTP \($0.status)" + (report.map { " \($0)" } ?? "") } ?? "unhealthy: no answer from \(url)")
            throw ExitCode.failure
        }
        print(report ?? "ok")
    }

    /// "state: detail" from a /health body.
    static func summary(of body: [UInt8]) -> String? {
        guard let health = try? JSONDecoder().decode(HealthBody.self, from: Data(body)) else { return nil }
        return health.detail.map { "\(health.state): \($0)" } ?? health.state
    }

    /// What `summary(of:)` reads of a /health body: a `state` string, and
    /// `detail` when it is a string too.
    private struct HealthBody: Decodable {
        var state: String
        var detail: String?

        enum CodingKeys: String, CodingKey { case state, detail }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            state = try container.decode(String.self, forKey: .state)
            detail = try? container.decode(String.self, forKey: .detail)
        }
    }
}

/// The scheme, host, port and health path of an http or https URL, and a
/// minimal GET.
struct HealthTarget {
    var isHTTPS: Bool
    var host: String
    var port: UInt16
    var path: String

    init?(_ url: String) {
        guard let scheme = ["http://", "https://"].first(where: url.hasPrefix) else { return nil }
        isHTTPS = scheme == "https://"
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" }
        // The base URL the README gives (`http://127.0.0.1:8080`), with or
        // without a path prefix, names the gateway; its health is below it.
        var path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : ""
        if !path.hasSuffix("/health") {
            while path.hasSuffix("/") { path.removeLast() }
            path += "/health"
        }
        self.path = path
        guard let address = SocketAddress(parsing: String(authority)), address.port > 0 else { return nil }
        host = address.host == "localhost" ? "127.0.0.1" : address.host
        port = UInt16(address.port)
    }

    /// The status code and body of `GET path`, or nil when there was no
    /// HTTP answer in time; throws when the TLS handshake fails (with
    /// `verify`, also when the certificate is not trusted for `host`).
    func fetch(timeoutMilliseconds: Int32, verify: Bool) throws(TLSClientSession.Failure) -> (status: Int, body: [UInt8])? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: Int(timeoutMilliseconds / 1000), tv_usec: Int(timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
        let tls = isHTTPS
            ? try TLSClientSession(fd: fd, host: host, verify: verify, timeoutMilliseconds: UInt32(timeoutMilliseconds))
            : nil
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        let sent =
            tls?.send(request)
            ?? (request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        guard sent else { return nil }
        // "Connection: close": the answer ends when the gateway closes.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 65536 {
            let count = tls?.receive(into: &buffer) ?? buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        guard received.count >= 12 else { return nil }
        // "HTTP/1.1 200 ..."
        let line = String(decoding: received.prefix(64), as: UTF8.self)
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else { return nil }
        let separator: [UInt8] = [13, 10, 13, 10]
        var bodyStart = received.count
        for index in 0..<(received.count - 3) where Array(received[index..<index + 4]) == separator {
            bodyStart = index + 4
            break
        }
        return (status, Array(received[bodyStart...]))
    }
}
