import HTTPServer
import Logging

/// Logs each request's outcome: server errors (5xx) at error level, a few
/// per interval (a flood of timeouts must not become a flood of lines),
/// client errors at debug. Handler errors have become problem responses by
/// the time they pass here (the router maps them, request in hand), so the
/// status is all there is to read.
struct RequestLogging: Middleware {
    let logger: Logger
    let serverErrors: RateLimitedLog

    init(logger: Logger) {
        self.logger = logger
        serverErrors = RateLimitedLog(logger: logger, level: .error)
    }

    func handle(_ request: Request, next: Next) async throws -> Response {
        let response = try await next(request)
        let status = response.status.code
        if status >= 500 {
            serverErrors.note("\(request.method.rawValue) \(request.path) -> \(status)")
        } else if status >= 400 {
            logger.debug("\(request.method.rawValue) \(request.path) -> \(status)")
        }
        return response
    }
}
