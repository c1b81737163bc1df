import HTTPServer

/// Cross-origin access for browser clients: the configured origins (or `*`)
/// get `Access-Control-Allow-Origin` on every response, and preflight
/// `OPTIONS` requests are answered here.
struct CORSMiddleware: Middleware {
    /// Allowed origins; `*` allows any.
    let origins: Set<String>

    static let allowedHeaders = "Authorization, Content-Type, Accept, Last-Event-ID, X-Request-ID"
    static let allowedMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"

    func handle(_ request: Request, next: Next) async throws -> Response {
        guard let origin = request.headers["Origin"], origins.contains("*") || origins.contains(origin) else {
            return try await next(request)
        }
        let allowOrigin = origins.contains("*") ? "*" : origin
        var response: Response
        if request.method == .options, request.headers["Access-Control-Request-Method"] != nil {
            response = Response(status: .noContent)
            response.headers.replaceOrAdd(name: "Access-Control-Allow-Methods", value: Self.allowedMethods)
            response.headers.replaceOrAdd(name: "Access-Control-Allow-Headers", value: Self.allowedHeaders)
            response.headers.replaceOrAdd(name: "Access-Control-Max-Age", value: "600")
        } else {
            response = try await next(request)
        }
        response.headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: allowOrigin)
        if allowOrigin != "*" { response.headers.replaceOrAdd(name: "Vary", value: "Origin") }
        response.headers.replaceOrAdd(name: "Access-Control-Expose-Headers", value: "Location, Retry-After, X-Request-ID")
        return response
    }
}
