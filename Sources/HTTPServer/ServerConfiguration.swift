/// Where a `Server` listens and the limits it enforces.
public struct ServerConfiguration: Sendable {
    /// A numeric IPv4 or IPv6 address or a host name. `0.0.0.0` is every
    /// IPv4 interface, `::` every interface in both families (dual stack).
    public var host: String
    /// The TCP port; 0 picks a free one (read it back from `Server.port`).
    public var port: Int
    /// The most connections served at once; each open SSE stream holds
    /// one. Past it, a few more connections are accepted and their requests
    /// answered 503 (`Connection: close`), so a client learns at once that
    /// the server is full instead of waiting unanswered.
    public var connectionLimit: Int
    /// The most connections one client address may hold at once (loopback
    /// included); its further connections are answered 503. Zero for no
    /// limit.
    public var maxConnectionsPerClient: Int
    /// How long a client has to send a whole request head: from its
    /// connection's accept, and on a kept-alive connection from the end of
    /// the previous response. A connection past it is closed, however
    /// slowly it keeps sending. Running handlers and open streams are not
    /// affected. Zero for no limit.
    public var requestHeaderTimeout: Duration
    /// Memory per connection for the request line, headers and send buffer
    /// (MHD_OPTION.CONNECTION_MEMORY_LIMIT); raised to at least six times
    /// `maxHeaderSize`. Heads that do not fit even that (over about 20 KiB,
    /// or with more than about 300 fields, at the defaults) get
    /// libmicrohttpd's own 414 or 431 page, which is not made by the error
    /// factory. Each open connection (an idle stream too) keeps all of it
    /// resident, so it is kept small.
    public var connectionMemoryLimit: Int
    /// The largest request line plus headers answered normally; bigger ones
    /// get a 431 (a 414 when the target alone is bigger) from the error
    /// factory.
    public var maxHeaderSize: Int
    /// The most header fields a request may have; more get a 431 from the
    /// error factory.
    public var maxHeaderFields: Int
    /// The largest request body accepted; bigger ones get a 413: before the
    /// body is sent when the client waits for `100 Continue` or declares
    /// more than twice this, otherwise after the body (read and dropped),
    /// so the client is not reset in the middle of sending it. An upload
    /// still going at twice this has its connection closed.
    public var maxRequestBodySize: Int
    /// How long a client has to send a request body, from the end of its
    /// head, plus one second for every `minimumRequestBodyRate` bytes it
    /// has sent so far: past that, a body trickled in (however steadily)
    /// has its connection closed. Zero for no limit.
    public var requestBodyTimeout: Duration
    /// The slowest average rate, in bytes per second, at which a body may
    /// arrive once `requestBodyTimeout` has passed (see there).
    public var minimumRequestBodyRate: Int
    /// The most memory all request bodies being received (and their
    /// requests being handled) may hold at once; a body that would take
    /// more is refused with a 503 before it is read. Zero for no limit.
    public var requestBodyMemoryLimit: Int
    /// The same, per client address.
    public var requestBodyMemoryLimitPerClient: Int
    /// A connection with no traffic for this long is closed (whole seconds;
    /// zero for never), such as an upload that stalls or a client that
    /// stops reading a response. Suspended connections (handlers running,
    /// idle streams) are exempt: streams rely on heartbeats instead. Waiting
    /// for a request head is bounded by `requestHeaderTimeout`.
    public var idleTimeout: Duration
    /// The listen socket's accept backlog.
    public var listenBacklog: Int
    /// How long `stop()` waits for handlers and streams by default.
    public var shutdownGracePeriod: Duration
    /// Makes the responses for errors the server detects itself (400 for
    /// ambiguous framing, 413, 414, 431, 503 when full, stopping or out of
    /// body memory, 500 when a handler fails).
    public var errorResponses: ErrorResponseFactory
    /// Serve HTTPS with this certificate and key; nil for plain HTTP.
    public var tls: TLSConfiguration?
    /// Query parameters whose values never reach the log (request targets
    /// are logged with `name=REDACTED`); names compare ignoring case.
    public var redactedQueryParameters: Set<String>

    /// A configuration; every limit has a default suited to a small gateway.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        connectionLimit: Int = 1024,
        maxConnectionsPerClient: Int = 128,
        requestHeaderTimeout: Duration = .seconds(10),
        connectionMemoryLimit: Int = 4 * 1024,
        maxHeaderSize: Int = 4 * 1024,
        maxHeaderFields: Int = 100,
        maxRequestBodySize: Int = 1024 * 1024,
        requestBodyTimeout: Duration = .seconds(10),
        minimumRequestBodyRate: Int = 1024,
        requestBodyMemoryLimit: Int = 32 * 1024 * 1024,
        requestBodyMemoryLimitPerClient: Int = 8 * 1024 * 1024,
        idleTimeout: Duration = .seconds(60),
        listenBacklog: Int = 1024,
        shutdownGracePeriod: Duration = .seconds(5),
        errorResponses: ErrorResponseFactory = .plainText,
        tls: TLSConfiguration? = nil,
        redactedQueryParameters: Set<String> = ["access_token"]
    ) {
        self.host = host
        self.port = port
        self.connectionLimit = connectionLimit
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.requestHeaderTimeout = requestHeaderTimeout
        self.connectionMemoryLimit = connectionMemoryLimit
        self.maxHeaderSize = maxHeaderSize
        self.maxHeaderFields = maxHeaderFields
        self.maxRequestBodySize = maxRequestBodySize
        self.requestBodyTimeout = requestBodyTimeout
        self.minimumRequestBodyRate = minimumRequestBodyRate
        self.requestBodyMemoryLimit = requestBodyMemoryLimit
        self.requestBodyMemoryLimitPerClient = requestBodyMemoryLimitPerClient
        self.idleTimeout = idleTimeout
        self.listenBacklog = listenBacklog
        self.shutdownGracePeriod = shutdownGracePeriod
        self.errorResponses = errorResponses
        self.tls = tls
        self.redactedQueryParameters = redactedQueryParameters
    }
}
