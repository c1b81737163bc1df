/// An HTTP response: status, header fields and a body.
///
/// `Content-Length` and `Transfer-Encoding` are the server's business (it
/// sets them from the body) and are dropped if a handler sets them. For a
/// HEAD request the server sends the same headers and no body.
public struct Response: Sendable {
    public var status: Status
    public var headers: Headers
    public var body: ResponseBody

    /// A response; with the defaults, an empty 200.
    public init(status: Status = .ok, headers: Headers = Headers(), body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a UTF-8 text body (`text/plain; charset=utf-8` unless
    /// `contentType` says otherwise).
    public static func text(
        _ text: String, status: Status = .ok, contentType: String = "text/plain; charset=utf-8"
    ) -> Response {
        Response(status: status, headers: ["Content-Type": contentType], body: .bytes(Array(text.utf8)))
    }

    /// A response with a byte body.
    public static func bytes(
        _ bytes: [UInt8], status: Status = .ok, contentType: String = "application/octet-stream"
    ) -> Response {
        Response(status: status, headers: ["Content-Type": contentType], body: .bytes(bytes))
    }

    /// A `text/event-stream` response fed by `writer`, with the headers that
    /// keep caches and reverse proxies from buffering it.
    public static func eventStream(_ writer: StreamWriter, status: Status = .ok, headers: Headers = Headers()) -> Response {
        var all = headers
        if !all.contains("Content-Type") { all.add(name: "Content-Type", value: "text/event-stream") }
        if !all.contains("Cache-Control") { all.add(name: "Cache-Control", value: "no-cache") }
        if !all.contains("X-Accel-Buffering") { all.add(name: "X-Accel-Buffering", value: "no") }
        return Response(status: status, headers: all, body: .stream(writer))
    }
}
