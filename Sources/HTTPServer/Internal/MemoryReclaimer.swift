import CMicroHTTPD
import Synchronization

/// Gives the memory of closed connections back to the system once many of
/// them have closed.
///
/// A connection's memory (libmicrohttpd's pool and response, the request's
/// and the stream's objects) comes from malloc, spread over the arenas of
/// the threads that made it. When connections close, glibc keeps what they
/// freed inside its heaps, resident, for later allocations; after a wave of
/// streams has gone, that is most of what they used. So when the open
/// connections fall to half of their peak since the last trim (and by at
/// least `minimumDrop`), `malloc_trim` hands the free pages back, a moment
/// later, once the wave has settled. It runs off libmicrohttpd's thread.
final class MemoryReclaimer: Sendable {
    /// Fewer closed connections than this are not worth a trim.
    static let minimumDrop = 64
    /// How long after the drop the trim runs.
    static let settleDelay = Duration.seconds(1)

    private struct State {
        var open = 0
        var peak = 0
        var scheduled = false
    }

    private let state = Mutex(State())

    /// The number of open connections changed; polling thread.
    func connectionsChanged(open: Int) {
        let schedule = state.withLock { state -> Bool in
            state.open = open
            state.peak = max(state.peak, open)
            guard !state.scheduled, state.peak - open >= Self.minimumDrop, open <= state.peak / 2 else { return false }
            state.scheduled = true
            return true
        }
        if schedule { Task { await trim() } }
    }

    private func trim() async {
        try? await Task.sleep(for: Self.settleDelay)
        _ = cmhd_malloc_trim()
        state.withLock { state in
            state.peak = state.open
            state.scheduled = false
        }
    }
}
