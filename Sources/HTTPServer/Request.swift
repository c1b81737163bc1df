/// An HTTP request as the server received it, body included.
///
/// The target is kept as sent; `pathSegments` and `query` are its decoded
/// views. The router fills `parameters` and `route` before middleware and
/// handlers see the request.
public struct Request: Sendable {
    /// The request method as sent (HEAD stays HEAD even when a GET route serves it).
    public var method: Method
    /// The request target exactly as sent (path and query, still percent-encoded).
    public var target: String
    /// The path part of the target, still percent-encoded.
    public var path: String
    /// The path split on `/` with empty segments dropped, each percent-decoded
    /// (so `%2F` inside a segment stays inside that segment).
    public var pathSegments: [String]
    /// The query items, in order, repeated keys kept, percent-decoded.
    public var query: QueryItems
    /// The header fields, in order.
    public var headers: Headers
    /// The request body (bounded by `ServerConfiguration.maxRequestBodySize`).
    public var body: [UInt8]
    /// The HTTP version token, such as `HTTP/1.1`.
    public var version: String
    /// The peer's address, when the socket reported one.
    public var remoteAddress: SocketAddress?
    /// Path parameters captured by the matched route pattern.
    public var parameters: Parameters
    /// The pattern of the route that matched, such as `/v1/devices/{address}`.
    public var route: String?

    /// Makes a request from its parts (the server and tests build requests this way).
    public init(
        method: Method,
        target: String,
        headers: Headers = Headers(),
        body: [UInt8] = [],
        version: String = "HTTP/1.1",
        remoteAddress: SocketAddress? = nil
    ) {
        self.method = method
        self.target = target
        let parsed = RequestTarget(target)
        self.path = parsed.path
        self.pathSegments = parsed.segments
        self.query = parsed.query
        self.headers = headers
        self.body = body
        self.version = version
        self.remoteAddress = remoteAddress
        self.parameters = Parameters()
        self.route = nil
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
