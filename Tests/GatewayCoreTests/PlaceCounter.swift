import BlueZ
import GatewayCore
import Synchronization

/// A quota of at most `limit` places per owner, by the key of what holds
/// each (a kept device, a subscription's id): taken, named, given back,
/// freed and restored, as the core asks.
final class PlaceCounter<Key: Hashable & Sendable>: Sendable {
    let limit: Int
    let reserved = Mutex<[String: Int]>([:])
    let holders = Mutex<[Key: String]>([:])

    init(limit: Int) { self.limit = limit }

    func holds(_ key: Key) -> Bool { holders.withLock { $0[key] != nil } }

    func reserve(for owner: String) throws(GatewayCommandError) -> QuotaPlace {
        let taken = reserved.withLock { reserved -> Bool in
            guard reserved[owner, default: 0] < limit else { return false }
            reserved[owner, default: 0] += 1
            return true
        }
        guard taken else { throw .limitReached(LimitReached(.client, detail: "\(owner) holds \(limit)")) }
        return QuotaPlace(owner: owner)
    }

    func assign(_ place: QuotaPlace, to key: Key) { holders.withLock { $0[key] = place.owner } }
    func cancel(_ place: QuotaPlace) { reserved.withLock { $0[place.owner, default: 0] -= 1 } }
    func release(_ key: Key) {
        guard let owner = holders.withLock({ $0.removeValue(forKey: key) }) else { return }
        reserved.withLock { $0[owner, default: 0] -= 1 }
    }
    func restore(_ key: Key, owner: String?) {
        let owner = owner ?? "unrecorded"
        holders.withLock { $0[key] = owner }
        reserved.withLock { $0[owner, default: 0] += 1 }
    }

    func count(_ owner: String) -> Int { reserved.withLock { $0[owner, default: 0] } }
}

extension PlaceCounter: ClientQuota {}
