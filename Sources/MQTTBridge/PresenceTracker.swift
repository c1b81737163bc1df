/// When a device's retained presence is published again: the first time it
/// is heard, when its signal changes by `threshold` dB or more (at most
/// every `minimumInterval`), and every `refreshInterval` while it is heard,
/// so that a fleet can tell a fresh presence from a stale one without a
/// message per advertisement.
struct PresenceTracker {
    let minimumInterval: Duration
    let refreshInterval: Duration
    let threshold: Int
    private var published: [String: (rssi: Int, at: ContinuousClock.Instant)] = [:]

    init(minimumInterval: Duration, refreshInterval: Duration, threshold: Int = 6) {
        self.minimumInterval = minimumInterval
        self.refreshInterval = refreshInterval
        self.threshold = threshold
    }

    /// Whether `rssi` for `device` should be published now (and if so,
    /// records it as published).
    mutating func offer(device: String, rssi: Int, now: ContinuousClock.Instant) -> Bool {
        if let last = published[device] {
            let age = now - last.at
            let changed = abs(rssi - last.rssi) >= threshold && age >= minimumInterval
            guard changed || age >= refreshInterval else { return false }
        }
        published[device] = (rssi, now)
        return true
    }

    /// Forgets a device; returns whether a presence was published for it
    /// (and so needs clearing).
    mutating func forget(_ device: String) -> Bool { published.removeValue(forKey: device) != nil }

    /// Forgets every device; returns those that had a presence.
    mutating func forgetAll() -> [String] {
        defer { published.removeAll() }
        return Array(published.keys)
    }
}
