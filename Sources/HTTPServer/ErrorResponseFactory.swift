/// Turns an `HTTPError` into the response that is sent for it.
///
/// Used for every error response the HTTPServer module produces itself (404,
/// 405, 413, 431, 503 while stopping, 500 for a handler's unexpected error)
/// and for `HTTPError`s thrown by handlers. The headers of the error (such as
/// `Allow`) are added to whatever the factory returns.
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
