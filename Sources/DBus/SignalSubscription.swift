import Synchronization

/// A match rule in effect for one subscriber; `cancel()` stops the delivery
/// and removes the rule from the bus.
public final class SignalSubscription: Sendable {
    private weak let connection: Connection?
    private let id: UInt64
    private let rule: MatchRule
    let matchAdded = Atomic(false)

    init(connection: Connection, id: UInt64, rule: MatchRule) {
        self.connection = connection
        self.id = id
        self.rule = rule
    }

    /// Stops delivering messages and removes the rule from the bus.
    /// Idempotent.
    public func cancel() {
        guard let connection, connection.router.remove(id), matchAdded.load(ordering: .acquiring) else { return }
        try? connection.send(Connection.busCall("RemoveMatch", [.string(rule.description)], noReply: true))
    }
}
