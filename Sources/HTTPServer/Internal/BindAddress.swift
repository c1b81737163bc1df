import Glibc

/// The socket address a server binds: where it listens, resolved.
struct BindAddress {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// `::`, which MHD binds in dual-stack mode (IPv4 and IPv6).
    var isUnspecifiedIPv6: Bool {
        guard family == AF_INET6 else { return false }
        let address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self).sin6_addr }
        return withUnsafeBytes(of: address) { $0.allSatisfy { $0 == 0 } }
    }

    /// Resolves `host` (numeric first, then by name) for a passive socket.
    static func resolve(host: String, port: Int) throws(ServerError) -> BindAddress {
        guard (0...65535).contains(port) else {
            throw ServerError(.invalidAddress, "port \(port) is out of range")
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw ServerError(.invalidAddress, "cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let family = current.pointee.ai_family
            if family == AF_INET || family == AF_INET6, let address = current.pointee.ai_addr,
                Int(current.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size
            {
                var result = BindAddress()
                result.length = current.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &result.storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen)))
                }
                return result
            }
            entry = current.pointee.ai_next
        }
        throw ServerError(.invalidAddress, "\(host) has no IPv4 or IPv6 address")
    }
}
