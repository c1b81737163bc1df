extension Duration {
    /// Whole milliseconds, rounded down: how the API counts time
    /// (`duration_ms`, `timeout_ms`).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
