/// What one gateway knows of the fleet, built only from what the broker
/// delivers (retained status, presence and connection topics, and claims).
/// Every gateway subscribes to the same topics of one broker, which
/// delivers them to each in the same order, so every gateway that has seen
/// the same messages computes the same `ranking` and the same claim winner.
struct FleetView {
    struct Presence {
        var rssi: Int
        var received: ContinuousClock.Instant
    }

    struct Claim {
        var winner: String?
        var device: String?
        var done = false
        var seen: ContinuousClock.Instant
    }

    /// Presence older than this does not count (a gateway refreshes it while
    /// it hears the device).
    let presenceFreshness: Duration
    /// After winning a claim for a device, a gateway goes first for that
    /// device's next requests for this long (a connect under way shows in no
    /// retained topic yet).
    let holdTime: Duration

    private(set) var online: Set<String> = []
    private var presence: [String: [String: Presence]] = [:]
    private var connected: [String: Set<String>] = [:]
    private var lastWinner: [String: (gateway: String, at: ContinuousClock.Instant)] = [:]
    private(set) var claims: [String: Claim] = [:]

    init(presenceFreshness: Duration, holdTime: Duration) {
        self.presenceFreshness = presenceFreshness
        self.holdTime = holdTime
    }

    mutating func setStatus(_ gateway: String, online isOnline: Bool) {
        if isOnline { online.insert(gateway) } else { online.remove(gateway) }
    }

    /// nil `rssi`: the presence was cleared.
    mutating func setPresence(_ gateway: String, device: String, rssi: Int?, now: ContinuousClock.Instant) {
        if let rssi {
            presence[device, default: [:]][gateway] = Presence(rssi: rssi, received: now)
        } else {
            presence[device]?[gateway] = nil
            if presence[device]?.isEmpty == true { presence[device] = nil }
        }
    }

    mutating func setConnected(_ gateway: String, device: String, _ isConnected: Bool) {
        if isConnected {
            connected[device, default: []].insert(gateway)
        } else {
            connected[device]?.remove(gateway)
            if connected[device]?.isEmpty == true { connected[device] = nil }
        }
    }

    /// The online gateways in the order they should take a request for
    /// `device`: those that have it connected, the latest claim winner
    /// (within `holdTime`), then those that hear it by signal strength
    /// (strongest first), then the rest; ties by gateway id.
    func ranking(for device: String?, now: ContinuousClock.Instant) -> [String] {
        ranking(for: device, now: now, everyone: true)
    }

    /// How many gateways lead `ranking(for:now:)` because they know the
    /// device (have it connected, won its latest claim, or hear it); the
    /// rest only stand in when none of those claims.
    func informedCount(for device: String?, now: ContinuousClock.Instant) -> Int {
        ranking(for: device, now: now, everyone: false).count
    }

    private func ranking(for device: String?, now: ContinuousClock.Instant, everyone: Bool) -> [String] {
        var order: [String] = []
        func add(_ ids: [String]) {
            for id in ids where online.contains(id) && !order.contains(id) { order.append(id) }
        }
        if let device {
            add((connected[device] ?? []).sorted())
            if let last = lastWinner[device], now - last.at < holdTime { add([last.gateway]) }
            let heard = (presence[device] ?? [:]).filter { now - $0.value.received < presenceFreshness }
            add(heard.sorted { ($0.value.rssi, $1.key) > ($1.value.rssi, $0.key) }.map(\.key))
        }
        if everyone { add(online.sorted()) }
        return order
    }

    /// Records a claim; returns the request's winner (the first claim seen
    /// since the request was last opened).
    mutating func claim(_ request: String, by gateway: String, device: String?, now: ContinuousClock.Instant) -> String? {
        var entry = claims[request] ?? Claim(device: device, seen: now)
        if entry.winner == nil, !entry.done {
            entry.winner = gateway
            if let device { lastWinner[device] = (gateway, now) }
        }
        claims[request] = entry
        return entry.winner
    }

    mutating func finish(_ request: String, now: ContinuousClock.Instant) {
        var entry = claims[request] ?? Claim(seen: now)
        entry.done = true
        claims[request] = entry
    }

    /// A gateway went offline: the requests it won and did not finish are
    /// open again. Returns them.
    mutating func reopen(wonBy gateway: String) -> [String] {
        var reopened: [String] = []
        for (request, entry) in claims where entry.winner == gateway && !entry.done {
            claims[request]?.winner = nil
            reopened.append(request)
        }
        for (device, last) in lastWinner where last.gateway == gateway { lastWinner[device] = nil }
        return reopened
    }

    func winner(of request: String) -> String? { claims[request]?.winner }
    func isFinished(_ request: String) -> Bool { claims[request]?.done ?? false }

    /// Forgets claims older than `age` (their requesters gave up long ago).
    mutating func expire(olderThan age: Duration, now: ContinuousClock.Instant) -> [String] {
        let old = claims.filter { now - $0.value.seen > age }.map(\.key)
        for request in old { claims[request] = nil }
        return old
    }
}
