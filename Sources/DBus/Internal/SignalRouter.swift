import Synchronization

/// Delivers incoming signals to the subscriptions whose rules match them,
/// and tracks the owners of the well-known names those rules name.
final class SignalRouter: Sendable {
    typealias Sink = AsyncThrowingStream<Message, any Error>.Continuation

    /// Where a subscription's messages go.
    enum Delivery: Sendable {
        /// A bounded stream, consumed by a task.
        case stream(Sink, bufferSize: Int)
        /// A function called on the loop thread, before any later message
        /// (a reply included) is delivered; `ended` runs once when the
        /// connection closes.
        case handler(@Sendable (Message) -> Void, ended: @Sendable (DBusError) -> Void)
    }

    private struct Subscription {
        let rule: MatchRule
        let delivery: Delivery
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

    func add(_ rule: MatchRule, delivery: Delivery) -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.subscriptions[state.nextID] = Subscription(rule: rule, delivery: delivery)
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

    /// Routes one incoming signal (loop thread). Deliveries happen outside
    /// the lock: finishing a stream runs its termination handler, which
    /// removes the subscription and so takes the lock, and a handler may
    /// subscribe or unsubscribe.
    func route(_ message: Message) {
        var overflowed: [(Sink, Int)] = []
        let deliveries = state.withLock { state -> [Delivery] in
            if message.sender == .bus, message.member?.rawValue == "NameOwnerChanged",
                message.body.count == 3, let name = message.body[0].string, let newOwner = message.body[2].string,
                let busName = BusName(rawValue: name), state.owners[busName] != nil
            {
                state.owners[busName] = newOwner.isEmpty ? Owner.none : .unique(BusName(unchecked: newOwner))
            }
            var matching: [Delivery] = []
            for subscription in state.subscriptions.values
            where subscription.rule.matchesIgnoringWellKnownSender(message)
                && Self.senderMatches(subscription.rule.sender, message.sender, state.owners)
            {
                matching.append(subscription.delivery)
            }
            return matching
        }
        for delivery in deliveries {
            switch delivery {
            case .stream(let sink, let bufferSize):
                if case .dropped = sink.yield(message) { overflowed.append((sink, bufferSize)) }
            case .handler(let handle, _):
                handle(message)
            }
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

    /// Ends every subscription (the connection closed).
    func finishAll(_ error: DBusError) {
        let deliveries = state.withLock { state in
            defer { state.subscriptions.removeAll() }
            return state.subscriptions.values.map(\.delivery)
        }
        for delivery in deliveries {
            switch delivery {
            case .stream(let sink, _): sink.finish(throwing: error)
            case .handler(_, let ended): ended(error)
            }
        }
    }
}
