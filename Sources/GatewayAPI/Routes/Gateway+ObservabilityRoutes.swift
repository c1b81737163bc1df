import HTTPServer

extension Gateway {
    /// `GET /metrics` (Prometheus text format) and the web console's static
    /// files (`/`, `/console.js`, `/console.css`, `/console/{module}`).
    func addObservabilityRoutes(to router: inout Router) {
        router.get("/metrics") { [self] _ in
            guard let exposition = configuration.metricsExposition else {
                throw Problem(.notFound, status: .notFound, detail: "this gateway does not collect metrics")
            }
            activityGauges.record(central.activity)
            return .bytes(exposition(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        for asset in ConsoleAssets.all where !asset.path.hasPrefix(ConsoleAssets.modulePrefix) {
            router.get(asset.path) { _ in Self.consoleResponse(asset) }
        }
        router.get(ConsoleAssets.modulePrefix + "{module}") { request in
            let path = ConsoleAssets.modulePrefix + request.pathParameter("module")
            guard let asset = ConsoleAssets.all.first(where: { $0.path == path }) else {
                throw Problem(.notFound, status: .notFound, detail: "the console has no module \(path)")
            }
            return Self.consoleResponse(asset)
        }
    }

    private static func consoleResponse(_ asset: ConsoleAssets.Asset) -> Response {
        var response = Response.bytes(asset.bytes, contentType: asset.contentType)
        // The console talks only to the gateway that served it: no
        // script, style or connection goes anywhere else.
        response.headers.replaceOrAdd(
            name: "Content-Security-Policy",
            value: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
        return response
    }
}
