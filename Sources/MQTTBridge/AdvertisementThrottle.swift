/// At most one advertisement per device per interval, the latest one:
/// a scan reports a device many times a second, and a broker subscriber
/// wants its current state, not every report.
struct AdvertisementThrottle {
    let interval: Duration
    private var lastPublished: [String: ContinuousClock.Instant] = [:]
    private var pending: [String: (topic: String, json: String)] = [:]

    init(interval: Duration) { self.interval = interval }

    /// Offers a device's latest advertisement: returns it if it may go out
    /// now, else keeps it (replacing an older kept one) for `due`.
    mutating func offer(device: String, topic: String, json: String, now: ContinuousClock.Instant)
        -> (topic: String, json: String)?
    {
        if let last = lastPublished[device], now - last < interval {
            pending[device] = (topic, json)
            return nil
        }
        lastPublished[device] = now
        pending[device] = nil
        return (topic, json)
    }

    /// The kept advertisements whose device's interval has passed.
    mutating func due(now: ContinuousClock.Instant) -> [(topic: String, json: String)] {
        var ready: [(topic: String, json: String)] = []
        for (device, item) in pending where now - (lastPublished[device] ?? now - interval) >= interval {
            ready.append(item)
            pending[device] = nil
            lastPublished[device] = now
        }
        return ready
    }

    /// Forgets a device (it was lost), so the map does not grow forever.
    mutating func forget(_ device: String) {
        lastPublished[device] = nil
        pending[device] = nil
    }
}
