import GatewayCore
import HTTPServer

extension Problem {
    /// The one table from the core's errors to problems; every door that
    /// answers with problem JSON (the routes, the MQTT bridge) goes through it.
    public init(_ error: GatewayCommandError) {
        switch error {
        case .invalidParameter(let name, let reason):
            self = .invalidParameter(name, reason)
        case .notFound(let detail):
            self.init(.notFound, status: .notFound, detail: detail)
        case .bluez(let error):
            self.init(error)
        case .noAdapter(let detail):
            self.init(.adapterUnavailable, status: .serviceUnavailable, detail: detail)
        case .limitReached(let limit):
            switch limit.scope {
            case .client: self.init(.quotaExceeded, status: .tooManyRequests, detail: limit.detail)
            case .gateway: self.init(.capacityExhausted, status: .insufficientStorage, detail: limit.detail)
            }
        case .stateStore(let failure):
            // The store's message names the file and the fix.
            self.init(
                .stateStoreFailed, status: failure.diskFull ? .insufficientStorage : .internalServerError,
                detail: "nothing was changed: \(failure.message)")
        case .timeout(let detail):
            self.init(.timeout, status: .gatewayTimeout, detail: detail)
        case .unavailable(let detail):
            self.init(.unavailable, status: .serviceUnavailable, detail: detail)
        }
    }
}

extension Problem {
    /// Text a client sent that is not JSON (a body, a payload).
    public init(_ error: JSONParseError) {
        self.init(.invalidRequest, status: .badRequest, detail: "the body is not valid JSON")
    }
}

/// A core error thrown by a route's handler becomes its problem response.
extension GatewayCommandError: ResponseConvertibleError {
    public func response(for request: Request?) -> Response {
        Problem(self).response(for: request)
    }
}
