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
