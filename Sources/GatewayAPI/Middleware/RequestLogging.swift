import HTTPServer
import Logging

/// Logs each request's outcome: client errors at debug, server errors at
/// error level with the problem's detail.
struct RequestLogging: Middleware {
    let logger: Logger

    func handle(_ request: Request, next: Next) async throws -> Response {
        do {
            let response = try await next(request)
            if response.status.code >= 500 {
                logger.error("\(request.method.rawValue) \(request.path) -> \(response.status.code)")
            }
            return response
        } catch let problem as Problem {
            let level: Logger.Level = problem.status.code >= 500 ? .warning : .debug
            logger.log(
                level: level,
                "\(request.method.rawValue) \(request.path) -> \(problem.status.code) \(problem.kind.rawValue): \(problem.detail)")
            var located = problem
            located.instance = request.path
            throw located
        }
    }
}
