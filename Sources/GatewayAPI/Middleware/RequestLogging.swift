import HTTPServer
import Logging

/// Logs each request's outcome: server errors (5xx) at error level, client
/// errors at debug. Handler errors have become problem responses by the time
/// they pass here (the router maps them, request in hand), so the status is
/// all there is to read.
struct RequestLogging: Middleware {
    let logger: Logger

    func handle(_ request: Request, next: Next) async throws -> Response {
        let response = try await next(request)
        let status = response.status.code
        if status >= 500 {
            logger.error("\(request.method.rawValue) \(request.path) -> \(status)")
        } else if status >= 400 {
            logger.debug("\(request.method.rawValue) \(request.path) -> \(status)")
        }
        return response
    }
}
