import HTTPServer

/// A request body that must be a JSON object with only the `allowed`
/// members; its fields are read as `JSONField`s (`body["label"].string()`).
struct JSONBody {
    /// The body as a whole (an object), its members named by their keys.
    let root: JSONField

    /// The request's body as a JSON object. An empty body is an empty
    /// object when `optional`; a body of another media type is a 415.
    init(_ request: Request, allowed: Set<String>, optional: Bool = false) throws(Problem) {
        if request.body.isEmpty {
            guard optional else {
                throw Problem(.invalidRequest, status: .badRequest, detail: "a JSON body is required")
            }
            self.init(root: JSONField(json: .object([])))
            return
        }
        if let type = request.headers["Content-Type"], !Self.isJSON(type) {
            throw Problem(
                .unsupportedMediaType, status: .unsupportedMediaType,
                detail: "the body is \(type); send it as Content-Type: application/json (with curl: --json '{...}')")
        }
        try self.init(json: request.body, allowed: allowed)
    }

    private init(root: JSONField) {
        self.root = root
    }

    /// A JSON object given as bytes (a request's body, or one the gateway
    /// stored), with only the `allowed` fields.
    init(json bytes: [UInt8], allowed: Set<String>) throws(Problem) {
        let json: JSON
        do {
            json = try JSON.parse(bytes)
        } catch {
            throw Problem(error)
        }
        guard case .object = json else {
            throw Problem(.invalidRequest, status: .badRequest, detail: "the body must be a JSON object")
        }
        let root = JSONField(json: json)
        try root.object(allowed: allowed)
        self.init(root: root)
    }

    static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";").first.map { $0.trimming(where: { $0.isWhitespace && !$0.isNewline }).lowercased() }
        return type == "application/json" || type?.hasSuffix("+json") == true
    }

    /// The member `key`, absent when the body does not have it.
    subscript(key: String) -> JSONField { root[key] }
}
