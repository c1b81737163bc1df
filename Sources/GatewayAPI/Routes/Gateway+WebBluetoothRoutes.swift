import HTTPServer

extension Gateway {
    /// `GET /webbluetooth.js` (classic script), `GET /webbluetooth.mjs` (ES
    /// module) and `GET /webbluetooth/playground.html`: `navigator.bluetooth`
    /// over this API for pages served anywhere, and a page that uses it.
    func addWebBluetoothRoutes(to router: inout Router) {
        for asset in WebBluetoothAssets.all {
            router.get(asset.path) { request in
                // Revalidated on every use (no-cache), so an upgraded gateway
                // serves its own script at once; unchanged, that costs a 304.
                var response =
                    request.headers["If-None-Match"].map { Self.etagMatches($0, asset.etag) } == true
                    ? Response(status: .notModified)
                    : Response.bytes(asset.bytes, contentType: asset.contentType)
                response.headers.replaceOrAdd(name: "ETag", value: asset.etag)
                response.headers.replaceOrAdd(name: "Cache-Control", value: "public, no-cache")
                response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
                if asset.contentType.hasPrefix("text/html") {
                    // The playground's own inline script and style, and calls
                    // to this gateway only.
                    response.headers.replaceOrAdd(
                        name: "Content-Security-Policy",
                        value: "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                            + "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
                } else {
                    // Public code: a module script from another origin loads
                    // only with CORS, whether or not that origin may call the API.
                    response.headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: "*")
                }
                return response
            }
        }
    }

    /// Whether an `If-None-Match` list names `etag` (or is `*`).
    static func etagMatches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.filter { !$0.isWhitespace }
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
