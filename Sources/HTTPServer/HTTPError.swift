/// An error that ends a request with a given status.
///
/// Thrown by handlers and middleware, and made by the server and router for
/// the errors they detect themselves (404, 405, 413, 431, 500, 503). Either
/// way it becomes a response through the configured `ErrorResponseFactory`,
/// so one place decides how errors look (plain text by default; the gateway
/// renders `application/problem+json`).
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The response status.
    public var status: Status
    /// A human-readable explanation for this occurrence (may be empty).
    public var detail: String
    /// Header fields the response must carry (`Allow` on a 405).
    public var headers: Headers

    /// An error with `status`, an optional detail for the response body, and
    /// header fields the response must carry.
    public init(_ status: Status, _ detail: String = "", headers: Headers = Headers()) {
        self.status = status
        self.detail = detail
        self.headers = headers
    }

    public var description: String {
        detail.isEmpty ? status.description : "\(status): \(detail)"
    }
}

/// An error that knows its own response; the server and router send it
/// without the `ErrorResponseFactory`.
public protocol ResponseConvertibleError: Error {
    /// The response to send for this error, for `request` (nil when the
    /// error happened before a request could be built), so the response can
    /// name the request it answers.
    func response(for request: Request?) -> Response
}
