import CMicroHTTPD
import Glibc
import Synchronization

/// Watches the sockets of streaming responses for the client closing its
/// end, so that a stream whose client left ends at once, not at its next
/// heartbeat.
///
/// A stream with nothing to send is suspended, and libmicrohttpd does not
/// poll suspended connections: without this, a departed client is only
/// noticed when a write fails, which (with a TCP peer that closed) takes
/// two writes, up to two heartbeat intervals. One thread polls every
/// watched socket for `POLLRDHUP` alone (data a client sends does not wake
/// it) and sleeps in between; sockets are registered once per stream, not
/// at every suspension, so the fan-out path pays nothing.
final class HangupWatcher: Sendable {
    private struct State {
        var watched: [Int32: ConnectionControl] = [:]
        /// Bumped at every change, so the thread knows to rebuild its set.
        var version: UInt64 = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let thread = WakeableThread()

    /// Watches the socket of `control` until `unwatch`.
    func watch(_ control: ConnectionControl) {
        guard control.socket >= 0 else { return }
        let watching = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.watched[control.socket] = control
            state.version += 1
            return true
        }
        if watching { thread.startOrWake { [self] in run() } }
    }

    /// Stops watching `control`'s socket; call before libmicrohttpd closes
    /// it (from the request-completed callback), so a reused descriptor
    /// number is never taken for this connection.
    func unwatch(_ control: ConnectionControl) {
        let changed = state.withLock { state -> Bool in
            guard state.watched[control.socket] === control else { return false }
            state.watched[control.socket] = nil
            state.version += 1
            return true
        }
        if changed { thread.wake() }
    }

    /// Ends the thread (the server stopped).
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.watched = [:]
        }
        thread.stop()
    }

    private func run() {
        var descriptors: [pollfd] = []
        var version: UInt64 = .max
        while !thread.isStopped {
            let snapshot = state.withLock { state -> (version: UInt64, fds: [Int32]?) in
                (state.version, state.version == version ? nil : Array(state.watched.keys))
            }
            if let fds = snapshot.fds {
                descriptors = [pollfd(fd: thread.wakeFD, events: Int16(POLLIN), revents: 0)]
                descriptors += fds.map { pollfd(fd: $0, events: CMHD_POLLRDHUP, revents: 0) }
                version = snapshot.version
            }
            for index in descriptors.indices { descriptors[index].revents = 0 }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0 { thread.drainWakeups() }
            let hungUp = descriptors.dropFirst().filter { $0.revents != 0 }.map(\.fd)
            if !hungUp.isEmpty { peersClosed(hungUp, pollSetVersion: version) }
        }
    }

    /// Watched sockets reported their peer closing (`POLLRDHUP`, or
    /// `POLLHUP`/`POLLERR`). If the watched set changed since the poll set
    /// was built, a descriptor may have been closed and its number reused,
    /// so nothing is ended now: the next poll, over the new set, reports
    /// the sockets that are still hung up (the events are level-triggered).
    private func peersClosed(_ fds: [Int32], pollSetVersion: UInt64) {
        let controls = state.withLock { state -> [ConnectionControl] in
            guard state.version == pollSetVersion else { return [] }
            // No longer watched: a hung-up socket would wake every poll.
            let ended = fds.compactMap { state.watched.removeValue(forKey: $0) }
            if !ended.isEmpty { state.version += 1 }
            return ended
        }
        for control in controls { control.peerClosed() }
    }
}
