import AsyncPrimitives
import Metrics
import Synchronization

/// Records every request through swift-metrics (a no-op until the program
/// bootstraps a backend):
///
/// - `blegateway_http_requests_total{method, route, status}`: requests answered;
/// - `blegateway_http_request_duration_seconds{method, route}`: a histogram of the time
///   from the request reaching the router to its response head (a stream's
///   head, not its whole life).
///
/// `route` is the matched pattern (`/v1/devices/{address}`), never the path
/// as sent, so the label set stays as small as the route table; requests
/// that matched no route share `route="unmatched"`, and methods outside the
/// standard ones share `method="other"`. Add it first so that it
/// sees what the other middleware answers too.
public struct RequestMetrics: Middleware {
    public static let requestsLabel = "blegateway_http_requests_total"
    public static let durationLabel = "blegateway_http_request_duration_seconds"

    private struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    /// The metric objects already made, so that a request costs one lookup
    /// rather than a registration in the backend.
    private final class Instruments: Sendable {
        let counters = Mutex<[Key: Counter]>([:])
        let timers = Mutex<[Key: Timer]>([:])

        func counter(_ key: Key) -> Counter {
            counters.withLock { counters in
                if let counter = counters[key] { return counter }
                let counter = Counter(
                    label: RequestMetrics.requestsLabel,
                    dimensions: [("method", key.method), ("route", key.route), ("status", String(key.status))])
                counters[key] = counter
                return counter
            }
        }

        func timer(_ key: Key) -> Timer {
            timers.withLock { timers in
                if let timer = timers[key] { return timer }
                let timer = Timer(
                    label: RequestMetrics.durationLabel, dimensions: [("method", key.method), ("route", key.route)])
                timers[key] = timer
                return timer
            }
        }
    }

    private let instruments = Instruments()

    /// Methods named in the label as they are; any other token (a client may
    /// send anything) is `other`, so clients cannot grow the label set.
    private static let standardMethods: Set<Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    public init() {}

    public func handle(_ request: Request, next: Next) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request)
        let elapsed = ContinuousClock.now - start
        let route = request.route ?? "unmatched"
        let method = Self.standardMethods.contains(request.method) ? request.method.rawValue : "other"
        instruments.counter(Key(method: method, route: route, status: response.status.code)).increment()
        instruments.timer(Key(method: method, route: route, status: 0)).recordNanoseconds(
            Int64(elapsed.nanoseconds))
        return response
    }
}
