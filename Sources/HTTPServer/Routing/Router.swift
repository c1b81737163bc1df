/// Routes requests by method and path pattern to handlers, through
/// middleware.
///
/// Patterns are paths whose segments are literals or `{name}` parameters.
/// A path with no route is a 404; a path with routes but none for the method
/// is a 405 with an `Allow` header. GET routes also serve HEAD (the server
/// sends no body). OPTIONS on a known path answers 204 with `Allow` unless
/// a route or `optionsHandler` says otherwise.
///
/// ```swift
/// var router = Router()
/// router.use(ClosureMiddleware { request, next in
///     var response = try await next(request)
///     response.headers["Access-Control-Allow-Origin"] = "*"
///     return response
/// })
/// router.get("/health") { _ in .text("ok\n") }
/// router.get("/v1/devices/{address}/characteristics/{char}/value") { request in
///     let address = try request.parameters.require("address")
///     return .text("reading \(address)\n")
/// }
/// let server = Server(configuration: .init(host: "127.0.0.1", port: 8080), responder: router)
/// try server.start()
/// // ...
/// await server.stop()
/// ```
public struct Router: Responder {
    /// A registered route: a method and the pattern it was added with.
    public struct Route: Sendable, Hashable, CustomStringConvertible {
        public let method: Method
        public let pattern: String

        public var description: String { "\(method) \(pattern)" }
    }

    /// Answers OPTIONS on a known path that has no OPTIONS route; receives
    /// the methods the path allows.
    public typealias OptionsHandler = @Sendable (_ request: Request, _ allowed: [Method]) async throws -> Response

    /// Makes the responses for 404, 405 and errors thrown by handlers.
    public var errorResponses: ErrorResponseFactory
    /// Overrides the default OPTIONS answer (204 with `Allow`).
    public var optionsHandler: OptionsHandler?

    var tree = RouteTree()
    var middleware: [any Middleware] = []
    /// Every route in the order it was added.
    public private(set) var routes: [Route] = []

    /// An empty router whose error responses come from `errorResponses`.
    public init(errorResponses: ErrorResponseFactory = .plainText) {
        self.errorResponses = errorResponses
    }

    /// Adds a route; a later route with the same method and pattern
    /// replaces the earlier one. A malformed pattern (unbalanced braces) is
    /// a programming error and stops the program.
    public mutating func on(_ method: Method, _ pattern: String, use handler: @escaping Handler) {
        guard let segments = RouteTree.parse(pattern) else {
            preconditionFailure("malformed route pattern: \(pattern)")
        }
        let names = segments.compactMap { segment -> String? in
            if case .parameter(let name) = segment { return name }
            return nil
        }
        tree.insert(segments, method: method, endpoint: .init(pattern: pattern, parameterNames: names, handler: handler))
        let route = Route(method: method, pattern: pattern)
        routes.removeAll { $0 == route }
        routes.append(route)
    }

    // Shorthands for `on(_:_:use:)`.
    public mutating func get(_ pattern: String, use handler: @escaping Handler) { on(.get, pattern, use: handler) }
    public mutating func post(_ pattern: String, use handler: @escaping Handler) { on(.post, pattern, use: handler) }
    public mutating func put(_ pattern: String, use handler: @escaping Handler) { on(.put, pattern, use: handler) }
    public mutating func patch(_ pattern: String, use handler: @escaping Handler) { on(.patch, pattern, use: handler) }
    public mutating func delete(_ pattern: String, use handler: @escaping Handler) { on(.delete, pattern, use: handler) }

    /// Adds middleware; the first added is the outermost.
    public mutating func use(_ middleware: some Middleware) {
        self.middleware.append(middleware)
    }

    /// Adds middleware from a closure; the first added is the outermost.
    public mutating func use(_ body: @escaping @Sendable (_ request: Request, _ next: Middleware.Next) async throws -> Response) {
        middleware.append(ClosureMiddleware(body))
    }
}
