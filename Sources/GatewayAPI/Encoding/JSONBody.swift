import HTTPServer

/// A JSON object from a request body, read field by field with a clear
/// 400 for each kind of mistake.
struct JSONBody {
    let members: [(String, JSON)]

    /// The request's body as a JSON object. An empty body is an empty
    /// object when `optional`; a body of another media type is a 415.
    init(_ request: Request, allowed: Set<String>, optional: Bool = false) throws(Problem) {
        if request.body.isEmpty {
            guard optional else {
                throw Problem(.invalidRequest, status: .badRequest, detail: "a JSON body is required")
            }
            self.init(members: [])
            return
        }
        if let type = request.headers["Content-Type"], !Self.isJSON(type) {
            throw Problem(
                .unsupportedMediaType, status: .unsupportedMediaType,
                detail: "the body is \(type); send it as Content-Type: application/json (with curl: --json '{...}')")
        }
        try self.init(json: request.body, allowed: allowed)
    }

    private init(members: [(String, JSON)]) {
        self.members = members
    }

    /// A JSON object given as bytes (a request's body, or one the gateway
    /// stored), with only the `allowed` fields.
    init(json bytes: [UInt8], allowed: Set<String>) throws(Problem) {
        guard case .object(let members) = try JSON.parse(bytes) else {
            throw Problem(.invalidRequest, status: .badRequest, detail: "the body must be a JSON object")
        }
        if let unknown = members.first(where: { !allowed.contains($0.0) }) {
            throw Problem.invalidParameter(
                unknown.0, "is not a field of this request (fields: \(allowed.sorted().joined(separator: ", ")))")
        }
        self.members = members
    }

    static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return type == "application/json" || type?.hasSuffix("+json") == true
    }

    subscript(key: String) -> JSON? {
        members.first { $0.0 == key }?.1
    }

    func string(_ key: String, maxLength: Int = .max) throws(Problem) -> String? {
        switch self[key] {
        case nil: return nil
        case .string(let value)? where value.count <= maxLength: return value
        case .string?: throw Problem.invalidParameter(key, "must be at most \(maxLength) characters")
        default: throw Problem.invalidParameter(key, "must be a string")
        }
    }

    func bool(_ key: String) throws(Problem) -> Bool? {
        switch self[key] {
        case nil: return nil
        case .bool(let value)?: return value
        default: throw Problem.invalidParameter(key, "must be true or false")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        switch self[key] {
        case nil: return nil
        case .int(let value)? where range.contains(value): return value
        default: throw Problem.invalidParameter(key, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    func strings(_ key: String) throws(Problem) -> [String]? {
        switch self[key] {
        case nil: return nil
        case .array(let elements)?:
            var strings: [String] = []
            for element in elements {
                guard case .string(let value) = element else {
                    throw Problem.invalidParameter(key, "must be an array of strings")
                }
                strings.append(value)
            }
            return strings
        default: throw Problem.invalidParameter(key, "must be an array of strings")
        }
    }
}
