/// A resource refused because its holder holds as many as it may.
public struct LimitReached: Error, Sendable, Hashable {
    /// Whose limit: the client's own, or the gateway's, all clients together.
    public enum Scope: Sendable, Hashable {
        case client
        case gateway
    }

    public let scope: Scope
    /// How many are held, the limit and the option that sets it.
    public let detail: String

    public init(_ scope: Scope, detail: String) {
        self.scope = scope
        self.detail = detail
    }
}
