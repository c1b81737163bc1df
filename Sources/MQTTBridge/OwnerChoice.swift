/// Which gateway should hold a fleet-kept device, from the merged view
/// every gateway builds (docs/fleet.md, "Choosing the holder"): smoothed
/// RSSI, a hysteresis margin in the holder's favour, `pin` and `prefer`,
/// a penalty for gateways whose attempts failed lately, and the connection
/// slots each gateway publishes.
struct OwnerChoice {
    struct Hearing: Sendable, Equatable {
        var gateway: String
        /// The moving average of the RSSIs it published (dBm).
        var average: Double
    }

    /// Hearings (presences not cleared) by online gateways.
    var hearings: [Hearing]
    /// Online gateways that may hold a device (they take fleet keeps).
    var online: Set<String>
    /// Passed over while another will do.
    var penalized: Set<String>
    /// Gateways that published no free connection slot (for the pinned
    /// adapter, when the keep pins one): never handed the device, and last
    /// in the order.
    var full: Set<String> = []
    var pin: String?
    var prefer: String?
    /// dB a challenger must beat the holder's average by.
    var margin: Double

    /// The gateways in the order they should take a free device: the pinned
    /// one alone; else the preferred one if it hears the device; then the
    /// hearers, strongest average first (ties by id), then penalized ones,
    /// then full ones; when nobody hears it, every online gateway by id.
    func candidates() -> [String] {
        if let pin { return online.contains(pin) ? [pin] : [] }
        let heard = hearings.filter { online.contains($0.gateway) }
            .sorted { ($0.average, $1.gateway) > ($1.average, $0.gateway) }.map(\.gateway)
        var order = heard.isEmpty ? online.sorted() : heard
        let available = order.filter { !full.contains($0) }
        order = available.filter { !penalized.contains($0) } + available.filter { penalized.contains($0) }
            + order.filter { full.contains($0) }
        if let prefer, heard.contains(prefer), !penalized.contains(prefer), !full.contains(prefer) {
            order = [prefer] + order.filter { $0 != prefer }
        }
        return order
    }

    /// The gateway `holder` should hand the device over to, if any: the
    /// pinned one when it is another and online; the preferred one when it
    /// hears the device; else a hearer whose average beats the holder's by
    /// `margin` (never while the holder itself is pinned or preferred). A
    /// gateway with no free slot is never the challenger (but for `pin`:
    /// the user asked for that one alone).
    func challenger(of holder: String) -> String? {
        if let pin {
            return pin != holder && online.contains(pin) ? pin : nil
        }
        if let prefer {
            if prefer == holder { return nil }
            if online.contains(prefer), !penalized.contains(prefer), !full.contains(prefer),
                hearings.contains(where: { $0.gateway == prefer })
            {
                return prefer
            }
        }
        guard let mine = hearings.first(where: { $0.gateway == holder })?.average else { return nil }
        let best = hearings.filter {
            $0.gateway != holder && online.contains($0.gateway) && !penalized.contains($0.gateway)
                && !full.contains($0.gateway)
        }
            .max { ($0.average, $1.gateway) < ($1.average, $0.gateway) }
        guard let best, best.average >= mine + margin else { return nil }
        return best.gateway
    }

    /// Another online gateway hears the device: someone to give it to when
    /// the holder fails or has lost it. Penalized gateways count only with
    /// `evenPenalized`: a holder whose attempts fail passes the device over
    /// them (no bouncing back to a gateway that failed lately), but one
    /// that no longer hears it at all is worse than any that does. A gateway
    /// with no free slot could not take it.
    func someoneElseHears(besides holder: String, evenPenalized: Bool = false) -> Bool {
        hearings.contains {
            $0.gateway != holder && online.contains($0.gateway) && !full.contains($0.gateway)
                && (evenPenalized || !penalized.contains($0.gateway))
        } && (pin == nil || pin != holder)
    }
}
