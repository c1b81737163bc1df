/// Path parameters captured by a route pattern: `{address}` in
/// `/v1/devices/{address}` captures the decoded segment under `address`.
public struct Parameters: Sendable, Hashable, Sequence {
    /// The captured `(name, value)` pairs in pattern order.
    public private(set) var pairs: [(name: String, value: String)]

    public init() { pairs = [] }

    public init(_ pairs: [(name: String, value: String)]) { self.pairs = pairs }

    /// The value captured for `name`, or nil.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// The value captured for `name`, or an `HTTPError` with status 500:
    /// a route pattern that names the parameter always captures it, so a
    /// miss is a programming error in the handler, not bad input.
    public func require(_ name: String) throws(HTTPError) -> String {
        guard let value = self[name] else {
            throw HTTPError(.internalServerError, "route has no parameter named \(name)")
        }
        return value
    }

    public var isEmpty: Bool { pairs.isEmpty }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { pairs.makeIterator() }

    public static func == (lhs: Parameters, rhs: Parameters) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.name)
            hasher.combine(pair.value)
        }
    }

    mutating func append(name: String, value: String) {
        pairs.append((name, value))
    }
}
