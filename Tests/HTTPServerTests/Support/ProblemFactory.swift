import Foundation
import HTTPServer

/// An error factory shaped like the gateway's: `application/problem+json`
/// with the status and detail.
let testProblems = ErrorResponseFactory { error, request in
    let object: [String: Any] = [
        "type": "urn:test:problem", "title": error.status.reasonPhrase, "status": error.status.code,
        "detail": error.detail, "instance": request?.path ?? "",
    ]
    let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
    return .bytes(Array(data), status: error.status, contentType: "application/problem+json")
}

extension RawClient.Message {
    /// The problem's fields, if this is an `application/problem+json` body.
    var problem: [String: Any]? {
        guard head.header("Content-Type") == "application/problem+json" else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}
