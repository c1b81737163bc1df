import HTTPServer

/// Requires `Authorization: Bearer <key>` on every request except the ones
/// a load balancer or a browser's preflight must reach without it (`/health`
/// and `OPTIONS`), and the paths the gateway opens besides (the web
/// console's static files and the Web Bluetooth script, whose API calls
/// carry the key). Browsers' EventSource cannot set headers, so the key is
/// also accepted as the `access_token` query parameter.
struct APIKeyMiddleware: Middleware {
    let key: [UInt8]
    let openPaths: Set<String>

    /// The paths open without a key: the health check.
    static let defaultOpenPaths: Set<String> = ["/health"]

    init(key: String, openPaths: Set<String> = defaultOpenPaths) {
        self.key = Array(key.utf8)
        self.openPaths = openPaths
    }

    func handle(_ request: Request, next: Next) async throws -> Response {
        let presented = Self.presentedKey(request)
        guard isOpen(request) || isValid(presented) else {
            var problem = Problem(
                .unauthorized, status: .unauthorized,
                detail: presented == nil
                    ? "send the API key as 'Authorization: Bearer <key>'" : "the API key is not valid")
            problem.instance = request.path
            var response = problem.response
            response.headers.replaceOrAdd(name: "WWW-Authenticate", value: #"Bearer realm="blegateway""#)
            return response
        }
        return try await next(request)
    }

    /// The key is checked on the head, so a request without it is refused
    /// before its body is read (and takes no memory for it).
    func admitsBody(of head: Request) -> Bool {
        isOpen(head) || isValid(Self.presentedKey(head))
    }

    private func isOpen(_ request: Request) -> Bool {
        request.method == .options || openPaths.contains(request.path)
    }

    private func isValid(_ presented: String?) -> Bool {
        guard let presented else { return false }
        return Self.constantTimeEquals(Array(presented.utf8), key)
    }

    private static func presentedKey(_ request: Request) -> String? {
        request.headers["Authorization"].flatMap(bearerToken) ?? request.query["access_token"]
    }

    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimming(where: { $0.isWhitespace && !$0.isNewline })
    }

    /// Compares without stopping at the first difference, so the time taken
    /// does not tell an attacker how much of a guess was right.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
