import Synchronization

/// Delivers incoming signals to the subscriptions whose rules match them,
/// and tracks the owners of the well-known names those rules name.
final class SignalRouter: Sendable {
    typealias Sink = AsyncThrowingStream<Message, any Error>.Continuation

    private struct Subscription {
        let rule: MatchRule
        let sink: Sink
        let bufferSize: Int
    }

    /// What is known of a well-known name's owner.
    enum Owner: Sendable, Equatable {
        /// Not yet looked up: signals are not filtered by sender.
        case unknown
        case none
        case unique(BusName)
    }

    private struct State {
        var subscriptions: [UInt64: Subscription] = [:]
        var nextID: UInt64 = 1
        var owners: [BusName: Owner] = [:]
    }

    private let state = Mutex(State())

    func add(_ rule: MatchRule, sink: Sink, bufferSize: Int) -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.subscriptions[state.nextID] = Subscription(rule: rule, sink: sink, bufferSize: bufferSize)
            return state.nextID
        }
    }

    /// Removes a subscription; returns whether it was there.
    @discardableResult
    func remove(_ id: UInt64) -> Bool {
        state.withLock { $0.subscriptions.removeValue(forKey: id) != nil }
    }

    /// Starts tracking `name`; returns false if it was already tracked.
    func beginTracking(_ name: BusName) -> Bool {
        state.withLock { state in
            guard state.owners[name] == nil else { return false }
            state.owners[name] = .unknown
            return true
        }
    }

    /// Records the answer of `GetNameOwner`, unless a `NameOwnerChanged`
    /// seen meanwhile already told something newer.
    func recordLookup(_ name: BusName, owner: Owner) {
        state.withLock { state in
            if state.owners[name] == .unknown { state.owners[name] = owner }
        }
    }

    /// Routes one incoming signal (loop thread). Sinks are fed outside the
    /// lock: finishing a stream runs its termination handler, which removes
    /// the subscription and so takes the lock.
    func route(_ message: Message) {
        var overflowed: [(Sink, Int)] = []
        let sinks = state.withLock { state -> [(Sink, Int)] in
            if message.sender == .bus, message.member?.rawValue == "NameOwnerChanged",
                message.body.count == 3, let name = message.body[0].string, let newOwner = message.body[2].string,
                let busName = BusName(rawValue: name), state.owners[busName] != nil
            {
                state.owners[busName] = newOwner.isEmpty ? Owner.none : .unique(BusName(unchecked: newOwner))
            }
            var matching: [(Sink, Int)] = []
            for subscription in state.subscriptions.values
            where subscription.rule.matchesIgnoringWellKnownSender(message)
                && Self.senderMatches(subscription.rule.sender, message.sender, state.owners)
            {
                matching.append((subscription.sink, subscription.bufferSize))
            }
            return matching
        }
        for (sink, bufferSize) in sinks {
            if case .dropped = sink.yield(message) { overflowed.append((sink, bufferSize)) }
        }
        for (sink, bufferSize) in overflowed {
            sink.finish(
                throwing: DBusError(
                    .limitsExceeded, "the subscriber fell more than \(bufferSize) signals behind; subscribe again"))
        }
    }

    private static func senderMatches(_ expected: BusName?, _ actual: BusName?, _ owners: [BusName: Owner]) -> Bool {
        guard let expected, !expected.isUnique else { return true }
        switch owners[expected] ?? .unknown {
        case .unknown: return true
        case .none: return false
        case .unique(let owner): return owner == actual
        }
    }

    /// Ends every stream (the connection closed).
    func finishAll(_ error: DBusError) {
        let sinks = state.withLock { state in
            defer { state.subscriptions.removeAll() }
            return state.subscriptions.values.map(\.sink)
        }
        for sink in sinks { sink.finish(throwing: error) }
    }
}
