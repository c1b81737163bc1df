/// A request target split into its path and query views.
struct RequestTarget {
    var path: String
    var segments: [String]
    var query: QueryItems

    init(_ target: String) {
        var rest = Substring(target)
        // Absolute form (`GET http://host/path`), sent to proxies: keep only
        // the path so routing works the same.
        if !rest.hasPrefix("/"), let scheme = rest.firstRange(of: "://") {
            let afterAuthority = rest[scheme.upperBound...]
            rest = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let rawPath: Substring
        if let question = rest.firstIndex(of: "?") {
            rawPath = rest[..<question]
            query = QueryItems(parsing: rest[rest.index(after: question)...])
        } else {
            rawPath = rest
            query = QueryItems()
        }
        path = String(rawPath)
        // Split before decoding, so an encoded slash stays inside its segment.
        segments = rawPath.split(separator: "/", omittingEmptySubsequences: true).map {
            PercentDecoding.decode($0, plusAsSpace: false)
        }
    }
}

extension RequestTarget {
    /// `target` with the values of the named query parameters replaced by
    /// `REDACTED` (names compared after percent-decoding, ignoring case),
    /// for logs.
    static func redacting(_ target: String, parameters: Set<String>) -> String {
        guard !parameters.isEmpty, let question = target.firstIndex(of: "?") else { return target }
        let names = Set(parameters.map { $0.lowercased() })
        let query = target[target.index(after: question)...]
        let fragment = query.firstIndex(of: "#").map { query[$0...] } ?? ""
        let items = query[..<(query.firstIndex(of: "#") ?? query.endIndex)].split(separator: "&", omittingEmptySubsequences: false)
        let redacted = items.map { item -> String in
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard names.contains(PercentDecoding.decode(name, plusAsSpace: true).lowercased()) else { return String(item) }
            return "\(name)=REDACTED"
        }
        return target[...question] + redacted.joined(separator: "&") + fragment
    }
}
