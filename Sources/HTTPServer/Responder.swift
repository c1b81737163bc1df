/// Something that answers requests: a `Router`, a middleware chain, or a
/// single closure. The server calls it on a task of its own for each request
/// (see `handlerExecutor(for:)` for where that task starts).
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

    /// The executor the handler of `request` prefers, or nil (the default)
    /// for a task of the global pool. With one, the handler starts at once
    /// on the server's polling thread, up to its first suspension, and its
    /// task prefers that executor afterwards (`Task.immediate(executorPreference:)`):
    /// no thread is woken to start it. Everything a handler does before it
    /// first suspends then holds up every connection of the server, so only
    /// a handler that never blocks before suspending may have one. Called
    /// on the polling thread with the whole request; must be quick.
    func handlerExecutor(for request: Request) -> (any TaskExecutor)?
}

extension Responder {
    public func admitsBody(of head: Request) -> Bool { true }

    public func handlerExecutor(for request: Request) -> (any TaskExecutor)? { nil }
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
