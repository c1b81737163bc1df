/// Code that wraps the responder: it sees every request before the handler
/// and every response after it, and may answer without calling `next`.
///
/// Middleware added to a `Router` runs after route matching (so
/// `request.route` and `request.parameters` are set) and around 404, 405 and
/// OPTIONS answers too, so logging, authentication and CORS see everything.
///
/// ```swift
/// struct RequireToken: Middleware {
///     let token: String
///     func handle(_ request: Request, next: Next) async throws -> Response {
///         guard request.headers["Authorization"] == "Bearer \(token)" else {
///             throw HTTPError(.unauthorized)
///         }
///         return try await next(request)
///     }
/// }
/// ```
public protocol Middleware: Sendable {
    /// The rest of the chain: the next middleware, or the handler.
    typealias Next = @Sendable (Request) async throws -> Response

    func handle(_ request: Request, next: Next) async throws -> Response

    /// Whether a request's body should be read, from its head alone (see
    /// `Responder.admitsBody(of:)`): middleware that would refuse the
    /// request anyway, such as authentication, says no here so the server
    /// does not take the body first. The default admits every body.
    func admitsBody(of head: Request) -> Bool
}

extension Middleware {
    public func admitsBody(of head: Request) -> Bool { true }
}

/// A `Middleware` made from a closure.
public struct ClosureMiddleware: Middleware {
    private let body: @Sendable (Request, Next) async throws -> Response

    public init(_ body: @escaping @Sendable (_ request: Request, _ next: Next) async throws -> Response) {
        self.body = body
    }

    public func handle(_ request: Request, next: Next) async throws -> Response {
        try await body(request, next)
    }
}
