/// The routes of a `Router` as a tree of path segments.
///
/// Each node has literal children by segment text and at most one parameter
/// child. Matching prefers a literal segment over a parameter and backtracks
/// when the literal branch leads to no route, so `/v1/devices/scan` and
/// `/v1/devices/{address}` can coexist.
struct RouteTree: Sendable {
    struct Endpoint: Sendable {
        let pattern: String
        let parameterNames: [String]
        let handler: Handler
    }

    struct Node: Sendable {
        var literals: [String: Int] = [:]
        var parameter: Int?
        var endpoints: [Method: Endpoint] = [:]
    }

    struct Match {
        let node: Node
        let values: [String]
    }

    private var nodes: [Node] = [Node()]

    /// One segment of a pattern.
    enum PatternSegment: Equatable {
        case literal(String)
        case parameter(String)
    }

    /// Splits a pattern such as `/v1/devices/{address}`; nil if a segment
    /// has unbalanced braces or an empty parameter name.
    static func parse(_ pattern: String) -> [PatternSegment]? {
        var segments: [PatternSegment] = []
        for part in pattern.split(separator: "/", omittingEmptySubsequences: true) {
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                let name = part.dropFirst().dropLast()
                guard !name.contains("{") && !name.contains("}") else { return nil }
                segments.append(.parameter(String(name)))
            } else if part.contains("{") || part.contains("}") {
                return nil
            } else {
                segments.append(.literal(PercentDecoding.decode(part, plusAsSpace: false)))
            }
        }
        return segments
    }

    /// Adds (or replaces) the endpoint for `method` at `segments`.
    mutating func insert(_ segments: [PatternSegment], method: Method, endpoint: Endpoint) {
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                if let next = nodes[index].literals[text] {
                    index = next
                } else {
                    nodes.append(Node())
                    nodes[index].literals[text] = nodes.count - 1
                    index = nodes.count - 1
                }
            case .parameter:
                if let next = nodes[index].parameter {
                    index = next
                } else {
                    nodes.append(Node())
                    nodes[index].parameter = nodes.count - 1
                    index = nodes.count - 1
                }
            }
        }
        nodes[index].endpoints[method] = endpoint
    }

    /// The node for decoded path `segments` and the values its parameters
    /// captured, in order; nil if no route has this path.
    func match(_ segments: [String]) -> Match? {
        var values: [String] = []
        guard let node = match(segments[...], from: 0, values: &values) else { return nil }
        return Match(node: nodes[node], values: values)
    }

    private func match(_ segments: ArraySlice<String>, from index: Int, values: inout [String]) -> Int? {
        guard let segment = segments.first else {
            return nodes[index].endpoints.isEmpty ? nil : index
        }
        let rest = segments.dropFirst()
        if let literal = nodes[index].literals[segment], let found = match(rest, from: literal, values: &values) {
            return found
        }
        if let parameter = nodes[index].parameter {
            values.append(segment)
            if let found = match(rest, from: parameter, values: &values) { return found }
            values.removeLast()
        }
        return nil
    }
}
