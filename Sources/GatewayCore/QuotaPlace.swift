/// A place taken in a quota for a resource being created.
public struct QuotaPlace: Sendable, Hashable {
    public let owner: String

    public init(owner: String) {
        self.owner = owner
    }
}
