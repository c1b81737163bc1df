// A backlog delivered at the pace the client reads: the writer asks its
// source for the next batch each time the client has taken most of the last.
extension StreamWriter {
    /// Writes the next part of a backlog to the writer it is given, about
    /// `budget` bytes (at least one item when there is one), and returns
    /// whether more is left to pull. It may suspend (to read a store).
    public typealias Refill = @Sendable (_ writer: StreamWriter, _ budget: Int) async -> Bool

    /// Feeds the stream from a backlog at the pace its client reads, so that
    /// a backlog of any size is delivered whole instead of overflowing
    /// `maxBufferedBytes` and dropping the client. Call it once, with what
    /// the writer holds already written (a first batch, say).
    ///
    /// `refill` runs on a task each time the queued bytes fall under
    /// `refillBudget` (at once if they are under it already), so the next
    /// batch is ready before the client has taken the last; never twice at
    /// once, and no more once the stream has ended (a call already under
    /// way then sees its writes refused). It writes with `write`, keeping
    /// each batch near the budget it is given. Once it returns false the
    /// writer stops asking: the producer writes live from then on (a
    /// producer that switches to live writing under its own lock, in the
    /// same step that finds the backlog empty, loses and repeats nothing).
    public func pull(_ refill: @escaping Refill) {
        let start = state.withLock { state -> Bool in
            guard case .open = state.phase, state.refill == nil else { return false }
            state.refill = refill
            return claimRefill(&state)
        }
        if start { Task { await runRefills() } }
    }

    /// The bytes asked of each refill, and the level under which the next
    /// one starts: a quarter of `maxBufferedBytes`, at most 64 KiB, which
    /// keeps a pulled stream well under its limit and each refill short.
    public var refillBudget: Int { max(1, min(configuration.maxBufferedBytes / 4, 64 * 1024)) }

    /// Marks a refill as started if one is wanted: a source is set, none is
    /// running, and the queue is low. The caller then runs `runRefills`.
    func claimRefill(_ state: inout State) -> Bool {
        guard state.refill != nil, !state.refilling, case .open = state.phase,
            state.bufferedBytes < refillBudget
        else { return false }
        state.refilling = true
        return true
    }

    /// Runs refills while the client keeps the queue low; the claim made by
    /// `claimRefill` is released on the way out.
    func runRefills() async {
        while await refillOnce() {}
    }

    /// One refill; true if another should follow at once (the source has
    /// more and the client already took what it wrote). Otherwise releases
    /// the claim, so the next read that drains the queue starts a refill.
    private func refillOnce() async -> Bool {
        let refill = state.withLock { state -> Refill? in
            guard case .open = state.phase, let refill = state.refill else {
                state.refill = nil
                state.refilling = false
                return nil
            }
            return refill
        }
        guard let refill else { return false }
        let more = await refill(self, refillBudget)
        return state.withLock { state in
            if !more { state.refill = nil }
            guard state.refill != nil, case .open = state.phase, state.bufferedBytes < refillBudget else {
                state.refilling = false
                return false
            }
            return true
        }
    }
}
