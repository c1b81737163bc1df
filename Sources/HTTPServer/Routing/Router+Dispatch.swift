extension Router {
    /// Matches the route, then runs the middleware chain around the handler
    /// (or around the 404 / 405 / OPTIONS answer).
    ///
    /// Errors thrown by the handler become responses inside the chain, so
    /// middleware sees them as responses (CORS headers get added to a 404
    /// too); errors thrown by middleware become responses here.
    public func respond(to request: Request) async throws -> Response {
        var request = request
        let endpoint = resolve(&request)
        let errors = errorResponses
        let innermost: Middleware.Next = { request in
            do {
                return try await endpoint(request)
            } catch {
                return errors.response(for: error, request: request)
            }
        }
        let chain = middleware.reversed().reduce(innermost) { next, middleware in
            { request in try await middleware.handle(request, next: next) }
        }
        do {
            return try await chain(request)
        } catch {
            return errors.response(for: error, request: request)
        }
    }

    /// A body is read only if every middleware admits it.
    public func admitsBody(of head: Request) -> Bool {
        middleware.allSatisfy { $0.admitsBody(of: head) }
    }

    /// The function that answers `request`, after filling its `parameters`
    /// and `route` when a route matched.
    private func resolve(_ request: inout Request) -> Handler {
        guard let match = tree.match(request.pathSegments) else {
            return { _ in throw HTTPError(.notFound) }
        }
        let endpoints = match.node.endpoints
        let endpoint = endpoints[request.method] ?? (request.method == .head ? endpoints[.get] : nil)
        if let endpoint {
            request.route = endpoint.pattern
            request.parameters = Parameters(Array(zip(endpoint.parameterNames, match.values)).map { (name: $0.0, value: $0.1) })
            return endpoint.handler
        }
        let allowed = Self.allowedMethods(endpoints.keys)
        if request.method == .options {
            let handler = optionsHandler
            return { request in
                if let handler { return try await handler(request, allowed) }
                return Response(status: .noContent, headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
            }
        }
        return { _ in
            throw HTTPError(.methodNotAllowed, headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
        }
    }

    /// The methods a path answers: its routes, HEAD wherever GET is, and
    /// OPTIONS; sorted for a stable `Allow` header.
    static func allowedMethods(_ registered: some Sequence<Method>) -> [Method] {
        var methods = Set(registered)
        if methods.contains(.get) { methods.insert(.head) }
        methods.insert(.options)
        return methods.sorted { $0.rawValue < $1.rawValue }
    }
}
