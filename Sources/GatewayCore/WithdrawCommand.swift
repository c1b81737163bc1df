import PersistedState

/// Withdraw a published application or advertisement, and forget it.
public struct WithdrawCommand: Sendable, Hashable {
    public let kind: PublishedItem.Kind
    public let id: String

    public init(_ kind: PublishedItem.Kind, id: String) {
        self.kind = kind
        self.id = id
    }
}
