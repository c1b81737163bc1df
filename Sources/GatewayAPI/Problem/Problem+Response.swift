import HTTPServer

extension Problem: ResponseConvertibleError {
    /// The problem as an `application/problem+json` response.
    public var response: Response {
        var response = Response.bytes(json, status: status, contentType: "application/problem+json")
        // BlueZ unreachable is temporary and the gateway recovers by itself:
        // tell clients when to try again (its reconnection backoff's bound).
        if kind == .bluetoothdUnavailable { response.headers.replaceOrAdd(name: "Retry-After", value: "5") }
        // Slots free when a device disconnects: a guess, not a promise, but
        // the request already waited its whole timeout for one.
        if kind == .noConnectionSlot { response.headers.replaceOrAdd(name: "Retry-After", value: "5") }
        return response
    }

    /// The problem as the answer to `request`: `instance` names the request's
    /// path unless the problem already names one.
    public func response(for request: Request?) -> Response {
        var located = self
        if located.instance == nil { located.instance = request?.path }
        return located.response
    }

    /// The JSON body: the RFC 9457 members first, then the gateway's own
    /// (`request_id` when it is made while a request is served).
    public var json: [UInt8] {
        var members: [(String, JSON)] = [
            ("type", .string(type)), ("title", .string(kind.title)), ("status", .int(status.code)),
            ("detail", .string(detail)),
        ]
        if let instance { members.append(("instance", .string(instance))) }
        if let requestID = RequestIdentity.current { members.append(("request_id", .string(requestID))) }
        if let dbusError { members.append(("dbus_error", .string(dbusError))) }
        if let attError { members.append(("att_error", .int(Int(attError)))) }
        if let candidates {
            members.append(
                ("candidates", .array(candidates.map { .object($0.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }) })))
        }
        if let invalidParameters {
            members.append(
                ("invalid_params", .array(invalidParameters.map { .object([("name", .string($0.name)), ("reason", .string($0.reason))]) })))
        }
        return JSON.object(members).bytes
    }
}

extension ErrorResponseFactory {
    /// Every error the HTTP layer produces itself (404, 405, 413, 431, 500,
    /// 503 while stopping) as problem+json.
    public static let problems = ErrorResponseFactory { error, request in
        let kind: Problem.Kind =
            switch error.status.code {
            case 400: .invalidRequest
            case 401: .unauthorized
            case 404: .notFound
            case 405: .methodNotAllowed
            case 413: .payloadTooLarge
            case 414: .invalidRequest
            case 431: .headersTooLarge
            case 503: .unavailable
            default: .internalError
            }
        var detail = error.detail
        if detail.isEmpty {
            detail =
                switch error.status.code {
                case 404: "no route for \(request?.path ?? "this path")"
                case 405: "\(request?.method.rawValue ?? "this method") is not allowed on \(request?.path ?? "this path")"
                case 413: "the request body is larger than the gateway accepts"
                default: kind.title
                }
        }
        return Problem(kind, status: error.status, detail: detail).response(for: request)
    }
}
