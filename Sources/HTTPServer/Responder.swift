/// Something that answers requests: a `Router`, a middleware chain, or a
/// single closure. The server calls it on a task of its own for each request.
public protocol Responder: Sendable {
    /// Answers `request`. Thrown errors become responses through the
    /// server's `ErrorResponseFactory`.
    func respond(to request: Request) async throws -> Response
}

/// A request handler: the function a route runs.
public typealias Handler = @Sendable (Request) async throws -> Response

/// A `Responder` made from a closure.
public struct ClosureResponder: Responder {
    private let handler: Handler

    public init(_ handler: @escaping Handler) { self.handler = handler }

    public func respond(to request: Request) async throws -> Response {
        try await handler(request)
    }
}
