import BlueZ

/// A field of JSON a client sent (a request body, an MQTT command), read
/// as a typed value: absent is nil, the wrong kind is a 400 problem that
/// names the field by its path in the document (`services[0].uuid`).
///
/// This is the gateway's one way to read typed values out of JSON.
public struct JSONField: Sendable {
    /// The value; nil when the field is absent.
    public let json: JSON?
    /// Where the field is, for error messages; empty for the document itself.
    public let path: String

    public init(json: JSON?, path: String = "") {
        self.json = json
        self.path = path
    }

    /// The member `key` of this object (absent when this is absent or not
    /// an object: `object(allowed:)` or `members()` says which).
    public subscript(key: String) -> JSONField {
        JSONField(json: json?[key], path: path.isEmpty ? key : "\(path).\(key)")
    }

    public func string(maxLength: Int = .max) throws(Problem) -> String? {
        switch json {
        case nil: return nil
        case .string(let value)? where value.count <= maxLength: return value
        case .string?: throw Problem.invalidParameter(path, "must be at most \(maxLength) characters")
        default: throw Problem.invalidParameter(path, "must be a string")
        }
    }

    /// A string that must be there.
    public func required() throws(Problem) -> String {
        guard let value = try string() else { throw Problem.invalidParameter(path, "is required") }
        return value
    }

    public func bool() throws(Problem) -> Bool? {
        switch json {
        case nil: return nil
        case .bool(let value)?: return value
        default: throw Problem.invalidParameter(path, "must be true or false")
        }
    }

    public func int(in range: ClosedRange<Int>) throws(Problem) -> Int? {
        switch json {
        case nil: return nil
        case .int(let value)? where range.contains(value): return value
        default: throw Problem.invalidParameter(path, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// The elements, each named `path[index]`; none when absent.
    public func array() throws(Problem) -> [JSONField] {
        switch json {
        case nil: return []
        case .array(let elements)?: return elements.enumerated().map { JSONField(json: $1, path: "\(path)[\($0)]") }
        default: throw Problem.invalidParameter(path, "must be an array")
        }
    }

    /// An array of strings; nil when absent.
    public func strings() throws(Problem) -> [String]? {
        guard json != nil else { return nil }
        var strings: [String] = []
        for element in try array() { strings.append(try element.required()) }
        return strings
    }

    /// Checks that this is an object (or absent) with only `allowed` members.
    public func object(allowed: Set<String>) throws(Problem) {
        for (key, _) in try members() where !allowed.contains(key) {
            throw Problem.invalidParameter(
                path.isEmpty ? key : "\(path).\(key)",
                "is not a field \(path.isEmpty ? "of this request" : "here") (fields: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// The members of an object, each named `path.key`, in the order sent;
    /// none when absent.
    public func members() throws(Problem) -> [(key: String, value: JSONField)] {
        switch json {
        case nil: return []
        case .object(let members)?:
            return members.map { ($0.0, JSONField(json: $0.1, path: path.isEmpty ? $0.0 : "\(path).\($0.0)")) }
        default: throw Problem.invalidParameter(path, "must be an object")
        }
    }

    /// A Bluetooth UUID in any form `BluetoothUUID(parsing:)` takes.
    func uuid() throws(Problem) -> BluetoothUUID {
        let text = try required()
        do {
            return try BluetoothUUID(parsing: text)
        } catch {
            throw Problem.invalidParameter(path, error.message)
        }
    }

    /// Bytes given as text in `encoding`; none when absent.
    func bytes(_ encoding: ByteEncoding) throws(Problem) -> [UInt8] {
        guard let text = try string() else { return [] }
        return try encoding.decode(text, field: path)
    }
}
