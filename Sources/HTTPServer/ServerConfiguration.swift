/// Where a `Server` listens and the limits it enforces.
public struct ServerConfiguration: Sendable {
    /// A numeric IPv4 or IPv6 address or a host name. `0.0.0.0` is every
    /// IPv4 interface, `::` every interface in both families (dual stack).
    public var host: String
    /// The TCP port; 0 picks a free one (read it back from `Server.port`).
    public var port: Int
    /// The most connections open at once (MHD_OPTION.CONNECTION_LIMIT);
    /// each open SSE stream holds one. Past it, new connections are refused.
    public var connectionLimit: Int
    /// Memory per connection for the request line, headers and send buffer
    /// (MHD_OPTION.CONNECTION_MEMORY_LIMIT). Requests whose headers do not
    /// fit get libmicrohttpd's own 431 response.
    public var connectionMemoryLimit: Int
    /// The largest request line plus headers answered normally; bigger ones
    /// get a 431 from the error factory. Keep it well under
    /// `connectionMemoryLimit`.
    public var maxHeaderSize: Int
    /// The largest request body accepted; bigger ones get a 413: before the
    /// body is sent when the client waits for `100 Continue` or declares
    /// more than twice this, otherwise after the body (read and dropped),
    /// so the client is not reset in the middle of sending it. An upload
    /// still going at twice this has its connection closed.
    public var maxRequestBodySize: Int
    /// A connection with no traffic for this long is closed (whole seconds;
    /// zero for never). Suspended connections (handlers running, idle
    /// streams) are exempt: streams rely on heartbeats instead.
    public var idleTimeout: Duration
    /// The listen socket's accept backlog.
    public var listenBacklog: Int
    /// How long `stop()` waits for handlers and streams by default.
    public var shutdownGracePeriod: Duration
    /// Makes the responses for errors the server detects itself (413, 431,
    /// 503 while stopping, 500 when a handler fails).
    public var errorResponses: ErrorResponseFactory
    /// Serve HTTPS with this certificate and key; nil for plain HTTP.
    public var tls: TLSConfiguration?

    /// A configuration; every limit has a default suited to a small gateway.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        connectionLimit: Int = 1024,
        connectionMemoryLimit: Int = 32 * 1024,
        maxHeaderSize: Int = 16 * 1024,
        maxRequestBodySize: Int = 1024 * 1024,
        idleTimeout: Duration = .seconds(60),
        listenBacklog: Int = 1024,
        shutdownGracePeriod: Duration = .seconds(5),
        errorResponses: ErrorResponseFactory = .plainText,
        tls: TLSConfiguration? = nil
    ) {
        self.host = host
        self.port = port
        self.connectionLimit = connectionLimit
        self.connectionMemoryLimit = connectionMemoryLimit
        self.maxHeaderSize = maxHeaderSize
        self.maxRequestBodySize = maxRequestBodySize
        self.idleTimeout = idleTimeout
        self.listenBacklog = listenBacklog
        self.shutdownGracePeriod = shutdownGracePeriod
        self.errorResponses = errorResponses
        self.tls = tls
    }
}
