/// A host and a port: a peer's numeric IP address, or where a server
/// listens (`init(parsing:)`), whose host may also be a name.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host, such as `127.0.0.1`, `::1` (numeric for a peer) or `localhost`.
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Whether the host is an IPv6 address.
    public var isIPv6: Bool { host.contains(":") }

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
