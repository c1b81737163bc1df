import DequeModule

/// Who holds which key of `Lanes`, and who waits for which, in arrival
/// order per key: the decisions of `Lanes`, without tasks or locks.
///
/// A waiter may run when each of its claims is free of the holders and no
/// waiter that arrived before it conflicts with it on that key: for an
/// exclusive claim, it is the oldest waiter on the key; for a shared one,
/// no exclusive claim waits on the key ahead of it. Keeping a queue per key
/// makes every decision cost the few keys involved, never a walk of all
/// waiters: a waiter that leaves can only unblock the heads of its own
/// keys' queues.
struct LaneTable<Key: Hashable & Sendable> {
    private struct Held {
        var shared = 0
        var exclusive = false
    }

    /// One waiter's place in one key's queue.
    private struct Place {
        let id: WaiterID
        let arrival: UInt64
    }

    /// A key's waiters in arrival order, and its exclusive ones apart. Both
    /// keep the places of waiters that left until they reach the head, or
    /// until they outnumber the living.
    private struct KeyQueue {
        var all = Deque<Place>()
        var exclusive = Deque<Place>()
        var waiting = 0
        var waitingExclusive = 0
    }

    private struct Waiting {
        let claims: [LaneClaim<Key>]
        let arrival: UInt64
    }

    private var held: [Key: Held] = [:]
    private var queues: [Key: KeyQueue] = [:]
    private var waiting: [WaiterID: Waiting] = [:]
    private var arrivals: UInt64 = 0

    /// Takes `claims` at once if a newcomer may: each free, and no waiter
    /// on any of their keys that it conflicts with.
    mutating func takeAtOnce(_ claims: [LaneClaim<Key>]) -> Bool {
        let mayTake = claims.allSatisfy { claim in
            guard isFree(claim) else { return false }
            guard let queue = queues[claim.key] else { return true }
            return claim.exclusive ? queue.waiting == 0 : queue.waitingExclusive == 0
        }
        if mayTake { take(claims) }
        return mayTake
    }

    /// Queues waiter `id` behind everyone on its keys.
    mutating func enqueue(_ id: WaiterID, _ claims: [LaneClaim<Key>]) {
        let place = Place(id: id, arrival: arrivals)
        arrivals += 1
        waiting[id] = Waiting(claims: claims, arrival: place.arrival)
        for claim in claims {
            queues[claim.key, default: KeyQueue()].all.append(place)
            queues[claim.key]?.waiting += 1
            if claim.exclusive {
                queues[claim.key]?.exclusive.append(place)
                queues[claim.key]?.waitingExclusive += 1
            }
        }
    }

    /// Gives back `claims`; returns the waiters that may run now, which
    /// hold their claims from here on.
    ///
    /// (Keys are mapped with closures, not `\.key`: in this generic type a
    /// key path literal is instantiated by the runtime on every call, which
    /// took about 2 % of a REST read's CPU.)
    mutating func release(_ claims: [LaneClaim<Key>]) -> [WaiterID] {
        for claim in claims {
            guard var entry = held[claim.key] else { continue }
            if claim.exclusive { entry.exclusive = false } else { entry.shared -= 1 }
            held[claim.key] = entry.exclusive || entry.shared > 0 ? entry : nil
        }
        return admit(from: claims.map { $0.key })
    }

    /// Waiter `id` gave up; returns the waiters that may run now.
    mutating func leave(_ id: WaiterID) -> [WaiterID] {
        guard let claims = remove(id) else { return [] }
        return admit(from: claims.map { $0.key })
    }

    /// How many hold `key` now, and how many wait for it.
    func occupancy(_ key: Key) -> (running: Int, waiting: Int) {
        let running = held[key].map { $0.exclusive ? 1 : $0.shared } ?? 0
        return (running, queues[key]?.waiting ?? 0)
    }

    // MARK: Admission

    /// Admits, from the heads of the queues of `keys`, every waiter that may
    /// run; a waiter admitted frees its place on its other keys, so those
    /// are looked at too.
    private mutating func admit(from keys: [Key]) -> [WaiterID] {
        var admitted: [WaiterID] = []
        var pending = keys
        while let key = pending.popLast() {
            for id in candidates(on: key) {
                guard let claims = waiting[id]?.claims else { continue }
                if mayRun(id) {
                    _ = remove(id)
                    take(claims)
                    admitted.append(id)
                    pending += claims.map { $0.key }.filter { $0 != key }
                } else if let claim = claims.first(where: { $0.key == key }), !isFree(claim) {
                    // The key's holders block it, and so everyone behind it.
                    break
                }
            }
        }
        return admitted
    }

    /// The waiters at the head of `key`'s queue that could run without an
    /// older waiter on the key in their way: the oldest, and when it is
    /// shared, the shared ones that follow it up to the first exclusive.
    private mutating func candidates(on key: Key) -> [WaiterID] {
        dropLeftPlaces(key)
        guard let queue = queues[key] else { return [] }
        var found: [WaiterID] = []
        for place in queue.all {
            guard let claim = waiting[place.id]?.claims.first(where: { $0.key == key }) else { continue }
            if claim.exclusive {
                if found.isEmpty { found.append(place.id) }
                break
            }
            found.append(place.id)
        }
        return found
    }

    /// Whether waiter `id` may run: each claim free, and no older waiter it
    /// conflicts with on the claim's key.
    private mutating func mayRun(_ id: WaiterID) -> Bool {
        guard let entry = waiting[id] else { return false }
        for claim in entry.claims {
            guard isFree(claim) else { return false }
            dropLeftPlaces(claim.key)
            guard let queue = queues[claim.key] else { continue }
            if claim.exclusive {
                guard queue.all.first?.id == id else { return false }
            } else if let oldestExclusive = queue.exclusive.first, oldestExclusive.arrival < entry.arrival {
                return false
            }
        }
        return true
    }

    // MARK: Bookkeeping

    private func isFree(_ claim: LaneClaim<Key>) -> Bool {
        guard let entry = held[claim.key] else { return true }
        return !entry.exclusive && (!claim.exclusive || entry.shared == 0)
    }

    private mutating func take(_ claims: [LaneClaim<Key>]) {
        for claim in claims {
            if claim.exclusive {
                held[claim.key, default: Held()].exclusive = true
            } else {
                held[claim.key, default: Held()].shared += 1
            }
        }
    }

    /// Forgets waiter `id`; returns its claims.
    private mutating func remove(_ id: WaiterID) -> [LaneClaim<Key>]? {
        guard let entry = waiting.removeValue(forKey: id) else { return nil }
        for claim in entry.claims {
            guard var queue = queues.removeValue(forKey: claim.key) else { continue }
            queue.waiting -= 1
            if claim.exclusive { queue.waitingExclusive -= 1 }
            guard queue.waiting > 0 else { continue }
            if queue.all.count > 2 * queue.waiting + 16 {
                queue.all = Deque(queue.all.filter { waiting[$0.id] != nil })
                queue.exclusive = Deque(queue.exclusive.filter { waiting[$0.id] != nil })
            }
            queues[claim.key] = queue
        }
        return entry.claims
    }

    /// Drops the places of waiters that left from the heads of `key`'s queue.
    private mutating func dropLeftPlaces(_ key: Key) {
        guard var queue = queues.removeValue(forKey: key) else { return }
        while let head = queue.all.first, waiting[head.id] == nil { queue.all.removeFirst() }
        while let head = queue.exclusive.first, waiting[head.id] == nil { queue.exclusive.removeFirst() }
        queues[key] = queue
    }
}
