import Foundation
import HTTPServer

extension Problem: ResponseConvertibleError {
    /// The problem as an `application/problem+json` response.
    public var response: Response {
        Response.bytes(json, status: status, contentType: "application/problem+json")
    }

    /// The JSON body, with a stable key order.
    public var json: [UInt8] {
        var object: [String: Any] = [
            "type": type, "title": kind.title, "status": Int(status.code), "detail": detail,
        ]
        if let instance { object["instance"] = instance }
        if let dbusError { object["dbus_error"] = dbusError }
        if let attError { object["att_error"] = Int(attError) }
        if let candidates { object["candidates"] = candidates }
        if let invalidParameters {
            object["invalid_params"] = invalidParameters.map { ["name": $0.name, "reason": $0.reason] }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Array(data)
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
        var problem = Problem(kind, status: error.status, detail: detail)
        problem.instance = request?.path
        return problem.response
    }
}
