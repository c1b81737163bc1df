/// Something that answers requests: a `Router`, a middleware chain, or a
/// single closure. The server calls it on a task of its own for each request.
public protocol Responder: Sendable {
    /// Answers `request`. Thrown errors become responses through the
    /// server's `ErrorResponseFactory`.
    func respond(to request: Request) async throws -> Response

    /// Whether the body of a request should be read, judged on its head
    /// alone (`head.body` is empty), before a byte of the body is. Called
    /// on the server's polling thread, so it must be quick and must not
    /// block. A request refused here is answered by `respond(to:)` with its
    /// body left empty, and its connection is closed (the body was not
    /// read). The default admits every body.
    func admitsBody(of head: Request) -> Bool
}

extension Responder {
    public func admitsBody(of head: Request) -> Bool { true }
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
