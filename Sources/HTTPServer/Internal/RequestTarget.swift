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
    ///
    /// A malformed item that starts with such a name (`access_token[]=s`,
    /// or `access_token%3Ds`, whose `=` is encoded so the whole item is its
    /// name) may still carry the secret: it is logged as
    /// `access_token(malformed)=REDACTED`, nothing of it kept.
    static func redacting(_ target: String, parameters: Set<String>) -> String {
        guard !parameters.isEmpty, let question = target.firstIndex(of: "?") else { return target }
        let names = parameters.map { $0.lowercased() }
        let query = target[target.index(after: question)...]
        let fragment = query.firstIndex(of: "#").map { query[$0...] } ?? ""
        let items = query[..<(query.firstIndex(of: "#") ?? query.endIndex)].split(separator: "&", omittingEmptySubsequences: false)
        let redacted = items.map { item -> String in
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let decoded = PercentDecoding.decode(name, plusAsSpace: true).lowercased()
            guard let secret = names.first(where: { decoded.hasPrefix($0) }) else { return String(item) }
            if decoded.count == secret.count { return "\(name)=REDACTED" }
            // `access_tokens` is another parameter; `access_token[` is not.
            let next = decoded[decoded.index(decoded.startIndex, offsetBy: secret.count)]
            if next.isLetter || next.isNumber || next == "_" || next == "-" { return String(item) }
            return "\(secret)(malformed)=REDACTED"
        }
        return target[...question] + redacted.joined(separator: "&") + fragment
    }
}
