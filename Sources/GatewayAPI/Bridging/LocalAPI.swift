import HTTPServer

/// The gateway's REST API for callers in the same process (the MQTT
/// bridge): the same routes, middleware and problem JSON as over HTTP,
/// without a socket. Made by `Gateway.localAPI()`.
public struct LocalAPI: Sendable {
    let router: Router
    let apiKey: String?

    /// One answer: the HTTP status, its content type and body.
    public struct Answer: Sendable, Hashable {
        public let status: Int
        public let contentType: String?
        public let body: [UInt8]
        /// 2xx.
        public var isSuccess: Bool { (200..<300).contains(status) }

        public init(status: Int, contentType: String?, body: [UInt8]) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    /// Sends `method` (`GET`, `POST`, `PUT`, `DELETE`) to `target` (a path
    /// with its query, such as `/v1/devices/AA:BB:CC:DD:EE:FF/connect`). A
    /// JSON body is sent as `application/json`. A route that answers with an
    /// event stream is refused (501): streams do not fit one answer.
    public func send(_ method: String, _ target: String, json body: [UInt8]? = nil) async -> Answer {
        var headers = Headers()
        if let apiKey, !apiKey.isEmpty { headers.add(name: "Authorization", value: "Bearer \(apiKey)") }
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        let request = Request(method: Method(rawValue: method), target: target, headers: headers, body: body ?? [])
        let response: Response
        do {
            response = try await router.respond(to: request)
        } catch {
            response = ErrorResponseFactory.problems.response(for: error, request: request)
        }
        switch response.body {
        case .stream(let writer):
            writer.finish()
            var problem = Problem(
                .notSupported, status: .notImplemented, detail: "\(target) answers with an event stream")
            problem.instance = request.path
            return Answer(status: problem.status.code, contentType: "application/problem+json", body: problem.json)
        case .bytes(let bytes):
            return Answer(status: response.status.code, contentType: response.headers["Content-Type"], body: bytes)
        }
    }
}
