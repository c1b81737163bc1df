import GatewayCore
import Synchronization

/// What each client holds of each limited resource, and the admission of
/// new ones against `Quotas`.
///
/// A request takes a `Slot` before it creates anything (so that
/// concurrent requests cannot both pass the check for the last place),
/// names it once the resource has its key (`assign`), or gives it back if
/// creating failed (`cancel`). Removing a resource frees its owner's place
/// (`release`). Resources restored at start-up are counted (`restore`)
/// whatever the limits, so that lowering a limit never drops what exists.
final class QuotaLedger: Sendable {
    enum Resource: String, Sendable {
        case keptDevice = "kept devices"
        case standingSubscription = "standing subscriptions"
        case application = "peripheral applications"
        case advertisement = "advertisements"

        /// The `serve` options that set its limits.
        var option: String {
            switch self {
            case .keptDevice: "--max-kept-devices"
            case .standingSubscription: "--max-subscriptions"
            case .application: "--max-applications"
            case .advertisement: "--max-advertisements"
            }
        }
    }

    /// A place taken for a resource being created.
    struct Slot: Sendable {
        let resource: Resource
        let owner: ClientID
    }

    private struct State {
        /// Each resource's holder, by the resource's key.
        var owners: [Resource: [String: ClientID]] = [:]
        /// Places held (named and still being created), by resource and client.
        var held: [Resource: [ClientID: Int]] = [:]
        var totals: [Resource: Int] = [:]

        mutating func add(_ resource: Resource, _ owner: ClientID, _ count: Int) {
            held[resource, default: [:]][owner, default: 0] += count
            if held[resource]?[owner] == 0 { held[resource]?[owner] = nil }
            totals[resource, default: 0] += count
        }
    }

    let quotas: Quotas
    private let state = Mutex(State())

    init(quotas: Quotas) {
        self.quotas = quotas
    }

    /// Takes a place for `owner`; throws a 429 problem past the client's
    /// limit, a 507 past the gateway's.
    func reserve(_ resource: Resource, for owner: ClientID) throws(Problem) -> Slot {
        do {
            return try admit(resource, for: owner)
        } catch {
            throw Problem(GatewayCommandError.limitReached(error))
        }
    }

    /// Takes a place for `owner`, or says whose limit it would pass.
    func admit(_ resource: Resource, for owner: ClientID) throws(LimitReached) -> Slot {
        let limit = quotas.limit(resource)
        let refusal = state.withLock { state -> LimitReached? in
            let mine = state.held[resource]?[owner] ?? 0
            let total = state.totals[resource] ?? 0
            if let perClient = limit.perClient, mine >= perClient {
                return LimitReached(
                    .client,
                    detail: """
                        this client holds \(mine) \(resource.rawValue), its limit (\(resource.option)-per-client \
                        \(perClient)): remove one first
                        """)
            }
            if total >= limit.total {
                return LimitReached(
                    .gateway,
                    detail: """
                        the gateway holds \(total) \(resource.rawValue), its limit (\(resource.option) \
                        \(limit.total)): remove one first
                        """)
            }
            state.add(resource, owner, 1)
            return nil
        }
        if let refusal { throw refusal }
        return Slot(resource: resource, owner: owner)
    }

    /// Names the resource a slot was taken for, so that `release(key)` frees it.
    func assign(_ slot: Slot, key: String) {
        state.withLock { state in
            // Already held (created twice): one place is enough.
            guard state.owners[slot.resource]?[key] == nil else { return state.add(slot.resource, slot.owner, -1) }
            state.owners[slot.resource, default: [:]][key] = slot.owner
        }
    }

    /// Gives back a slot whose resource was not created.
    func cancel(_ slot: Slot) {
        state.withLock { $0.add(slot.resource, slot.owner, -1) }
    }

    /// Frees the place of a removed resource; nothing if none was held.
    func release(_ resource: Resource, key: String) {
        state.withLock { state in
            guard let owner = state.owners[resource]?.removeValue(forKey: key) else { return }
            state.add(resource, owner, -1)
        }
    }

    /// Counts a resource restored at start-up (or held already) against
    /// its owner, whatever the limits.
    func restore(_ resource: Resource, key: String, owner: ClientID) {
        state.withLock { state in
            guard state.owners[resource]?[key] == nil else { return }
            state.owners[resource, default: [:]][key] = owner
            state.add(resource, owner, 1)
        }
    }

    /// Whether a resource with `key` is held.
    func holds(_ resource: Resource, key: String) -> Bool {
        state.withLock { $0.owners[resource]?[key] != nil }
    }
}
