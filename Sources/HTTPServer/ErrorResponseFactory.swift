/// Turns an `HTTPError` into the response that is sent for it.
///
/// Used for every error response the HTTPServer module produces itself (400
/// for ambiguous framing, 404, 405, 413, 414, 431, 503 when full or
/// stopping, 500 for a handler's unexpected error) and for `HTTPError`s
/// thrown by handlers. The headers of the error (such as `Allow`) are added
/// to whatever the factory returns.
///
/// libmicrohttpd 0.9.75 answers some broken requests itself, before any
/// callback of the server runs, with a fixed HTML body this factory cannot
/// replace (it queues them with MHD_queue_response from inside its parser,
/// and has no option to change them): 400 for a malformed request line,
/// header line, `Content-Length` value or chunked body; 505 for HTTP
/// versions other than 1.x; 413 for a chunk size that overflows; and
/// 414/431 for a head too big for the connection's memory (which the
/// server sizes so that heads up to twice `maxHeaderSize` get this
/// factory's 414/431 instead). Each of these closes the connection.
///
/// ```swift
/// let problems = ErrorResponseFactory { error, request in
///     .bytes(Array(#"{"status":\#(error.status.code)}"#.utf8),
///            status: error.status, contentType: "application/problem+json")
/// }
/// ```
public struct ErrorResponseFactory: Sendable {
    private let make: @Sendable (HTTPError, Request?) -> Response

    /// A factory from a closure. The request is nil when the error happened
    /// before a request could be built (body too large, header too large).
    public init(_ make: @escaping @Sendable (_ error: HTTPError, _ request: Request?) -> Response) {
        self.make = make
    }

    /// `text/plain` bodies: the status line, then the detail if any.
    public static let plainText = ErrorResponseFactory { error, _ in
        let text = error.detail.isEmpty ? "\(error.status)\n" : "\(error.status)\n\(error.detail)\n"
        return .text(text, status: error.status)
    }

    /// The response for `error`, with the error's headers added.
    public func response(for error: HTTPError, request: Request?) -> Response {
        var response = make(error, request)
        for field in error.headers { response.headers.replaceOrAdd(name: field.name, value: field.value) }
        return response
    }

    /// The response for any error thrown by a handler: a
    /// `ResponseConvertibleError` speaks for itself, an `HTTPError` goes
    /// through the factory, anything else is a 500 (its text is not sent,
    /// since it may hold internal details).
    public func response(for error: any Error, request: Request?) -> Response {
        switch error {
        case let convertible as any ResponseConvertibleError: convertible.response(for: request)
        case let httpError as HTTPError: response(for: httpError, request: request)
        default: response(for: HTTPError(.internalServerError), request: request)
        }
    }
}
