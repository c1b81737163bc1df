extension Duration {
    /// Whole milliseconds, rounded toward zero (saturating at `Int`'s
    /// bounds): how the API, the logs and poll(2) count time.
    public var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Self.saturating(seconds, times: 1000, plus: attoseconds / 1_000_000_000_000_000)
    }

    /// Whole milliseconds, rounded up: a timeout that must not end early
    /// (libdbus's call timeouts; libmicrohttpd's, in seconds, from these).
    public var millisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        let whole = attoseconds / 1_000_000_000_000_000
        let rest = attoseconds % 1_000_000_000_000_000
        return Self.saturating(seconds, times: 1000, plus: whole + (rest > 0 ? 1 : 0))
    }

    /// Whole nanoseconds, rounded toward zero (saturating).
    public var nanoseconds: Int {
        let (seconds, attoseconds) = components
        return Self.saturating(seconds, times: 1_000_000_000, plus: attoseconds / 1_000_000_000)
    }

    /// Seconds as a floating-point number, for comparing with `TimeInterval`s.
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func saturating(_ seconds: Int64, times scale: Int, plus part: Int64) -> Int {
        let (scaled, overflow) = Int(seconds).multipliedReportingOverflow(by: scale)
        let (total, overflowAgain) = scaled.addingReportingOverflow(Int(part))
        guard !overflow, !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }
}
