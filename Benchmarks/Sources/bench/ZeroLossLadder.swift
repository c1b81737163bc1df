/// The search for one subject's highest zero-loss notification rate: climbs
/// `rates` until a step fails (a value lost, a growing backlog, or the
/// responder could not emit that fast), then bisects four times between the
/// last good rate and the first bad one, a step of about 6% between 20,000
/// and 50,000/s, fine enough to judge a 0.9× target (no bisection after the
/// responder fell behind: the limit was then its own). A value, so that
/// several subjects' searches can take steps in turn.
struct ZeroLossLadder {
    let rates: [Double]
    private var index = 0
    private var bisections = 0
    private(set) var good: Double?
    private(set) var bad: Double?
    /// The responder could not keep a step's rate.
    private(set) var emitterFellBehind = false

    init(rates: [Double]) { self.rates = rates }

    /// The rate of the next step, or nil when the search is over.
    var next: Double? {
        if emitterFellBehind { return nil }
        guard let high = bad else { return index < rates.count ? rates[index] : nil }
        guard let low = good, bisections < 4 else { return nil }
        let middle = ((low * high).squareRoot() / 100).rounded() * 100
        return middle > low && middle < high ? middle : nil
    }

    mutating func record(rate: Double, sustained: Bool, emitterKeptUp: Bool) {
        if !emitterKeptUp { emitterFellBehind = true }
        let passed = sustained && emitterKeptUp
        if bad == nil {
            if passed {
                good = rate
                index += 1
            } else {
                bad = rate
            }
        } else {
            bisections += 1
            if passed { good = rate } else { bad = rate }
        }
    }

    /// What the report says of the search ("" when every rate passed).
    var note: String {
        if emitterFellBehind { return " The responder could not emit faster than this; the real limit may be higher." }
        guard let high = bad else { return "" }
        guard let low = good else { return " Loss or a growing backlog (p99 > 100 ms) already at \(Format.number(high))/s." }
        return " Sustained at \(Format.number(low))/s; loss or a growing backlog (p99 > 100 ms) at \(Format.number(high))/s."
    }
}
