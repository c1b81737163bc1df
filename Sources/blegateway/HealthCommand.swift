import ArgumentParser
import Glibc

/// `blegateway health`: asks a running gateway's `/health` and exits 0 when
/// it answers 200. For container health checks, where no HTTP client is
/// installed.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that a gateway answers on /health (exit 0) or not (exit 1).")

    @Option(
        help: ArgumentHelp(
            "The gateway's base URL, or its /health URL (plain http).",
            discussion: "http://HOST:PORT checks http://HOST:PORT/health; a path is kept, with /health added unless it ends so."))
    var url = "http://127.0.0.1:8080"

    @Option(help: "Give up after this many seconds.")
    var timeout: Double = 3

    func run() async throws {
        guard let target = HealthTarget(url) else {
            throw ValidationError("--url must look like http://HOST:PORT or http://HOST:PORT/PATH, not '\(url)'")
        }
        let status = target.fetchStatus(timeoutMilliseconds: Int32(max(0.1, timeout) * 1000))
        guard status == 200 else {
            print(status.map { "unhealthy: HTTP \($0)" } ?? "unhealthy: no answer from \(url)")
            throw ExitCode.failure
        }
        print("ok")
    }
}

/// The host, port and health path of a plain-http URL, and a minimal GET.
struct HealthTarget {
    var host: String
    var port: UInt16
    var path: String

    init?(_ url: String) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        // The base URL the README gives (`http://127.0.0.1:8080`), with or
        // without a path prefix, names the gateway; its health is below it.
        var path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : ""
        if !path.hasSuffix("/health") {
            while path.hasSuffix("/") { path.removeLast() }
            path += "/health"
        }
        self.path = path
        guard let address = ListenAddress(String(authority)), address.port > 0 else { return nil }
        host = address.host == "localhost" ? "127.0.0.1" : address.host
        port = UInt16(address.port)
    }

    /// The status code of `GET path`, or nil when there was no HTTP answer
    /// in time.
    func fetchStatus(timeoutMilliseconds: Int32) -> Int? {
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
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 12 else { return nil }
        // "HTTP/1.1 200 ..."
        let line = String(decoding: buffer[0..<count], as: UTF8.self)
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/") else { return nil }
        return Int(fields[1])
    }
}
