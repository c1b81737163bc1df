import AsyncPrimitives
import CMicroHTTPD
import Glibc
import Synchronization

/// An `MHD_Connection *` that may be handed to other threads.
// @unchecked Sendable: other threads pass the pointer only to
// MHD_resume_connection (thread-safe under MHD_ALLOW_SUSPEND_RESUME), and
// only under ConnectionControl's lock while the connection is suspended and
// MHD has not reported the request complete, so it is still alive. Every
// other use happens on MHD's polling thread.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Suspends and resumes one request's connection, and knows when MHD is done
/// with it.
///
/// libmicrohttpd frees a connection some time after it reports the request
/// complete, and resuming a connection that is not suspended leaves a stale
/// flag behind; so every resume goes through here, under one lock, and only
/// happens for a connection this object suspended and MHD still holds.
/// Lock order: a StreamWriter's lock may be held when calling in; this lock
/// is held while calling MHD (which takes its own internal mutex but never
/// calls back into us while holding it).
final class ConnectionControl: Sendable {
    private struct State {
        var suspended = false
        /// MHD reported the request complete: the pointer may be dangling.
        var finished = false
        /// The server is about to call MHD_stop_daemon: never suspend or
        /// resume again.
        var frozen = false
        /// The client closed its end: never suspend again (nothing would
        /// wake the connection), and end what it was waiting for.
        var peerHungUp = false
    }

    let connection: ConnectionHandle
    /// The connection's socket, for `shutdownSocket` and the hang-up
    /// watcher; -1 if unknown.
    let socket: Int32
    /// Taken by libmicrohttpd's polling thread (suspend) and by the
    /// threads that resume: a sleeping lock (see `SleepingMutex`).
    private let state = SleepingMutex(State())

    /// Polling thread only (reads the socket from MHD).
    init(connection: OpaquePointer) {
        self.connection = ConnectionHandle(pointer: connection)
        self.socket = cmhd_connection_socket(connection)
    }

    /// Suspends the connection; polling thread only, from the access handler
    /// or the content reader. Returns false (and does nothing) once the
    /// server is stopping, so the caller must answer instead of waiting.
    func suspend() -> Bool {
        state.withLock { state in
            guard !state.frozen, !state.finished, !state.peerHungUp else { return false }
            if !state.suspended {
                MHD_suspend_connection(connection.pointer)
                state.suspended = true
            }
            return true
        }
    }

    /// Set while a resume is queued in a thread's `DeferredResumes`, so it
    /// is queued once per turn however many writes the turn makes.
    private let deferredResumeQueued = Atomic(false)

    /// Claims the one deferred resume of this turn; false if it is queued
    /// already.
    func claimDeferredResume() -> Bool {
        !deferredResumeQueued.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Resumes the connection for the writes of a turn (see
    /// `DeferredResumes`).
    func resumeDeferred() {
        deferredResumeQueued.store(false, ordering: .releasing)
        resume()
    }

    /// Resumes the connection if this object suspended it; any thread.
    func resume() {
        state.withLock { state in
            guard state.suspended, !state.finished, !state.frozen else { return }
            state.suspended = false
            MHD_resume_connection(connection.pointer)
        }
    }

    /// Writes a response straight to the socket if the connection is
    /// suspended and its client has closed its sending side (see
    /// `HalfClosedReply`); any thread. Returns whether it did; the caller
    /// then resumes the connection, and libmicrohttpd closes it.
    func replyIfPeerHalfClosed(timeout: Duration, _ encode: () -> [UInt8]) -> Bool {
        state.withLock { state in
            guard state.suspended, !state.finished, !state.frozen, socket >= 0,
                HalfClosedReply.peerHalfClosed(socket)
            else { return false }
            // Sent or not, the client gets nothing else on this connection.
            _ = HalfClosedReply.write(encode(), to: socket, timeout: timeout)
            return true
        }
    }

    /// Records that MHD reported the request complete; polling thread only.
    func markFinished() {
        state.withLock { $0.finished = true }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Whether the client closed its end (seen by the `HangupWatcher`).
    var peerHungUp: Bool { state.withLock { $0.peerHungUp } }

    /// The client closed its end; any thread. A suspended connection is
    /// not polled by MHD, so it is shut down and resumed for MHD to see the
    /// error and complete the request; one that is active will fail its
    /// next write, and will not be suspended again.
    func peerClosed() {
        let suspended = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.peerHungUp = true
            return state.suspended
        }
        if suspended { shutdownSocket() }
    }

    /// Resumes the connection if suspended and forbids any later suspend or
    /// resume, so MHD_stop_daemon finds no suspended connection (it can hang
    /// on one) and no other thread touches a connection it is freeing.
    func freeze() {
        state.withLock { state in
            if state.suspended && !state.finished {
                state.suspended = false
                MHD_resume_connection(connection.pointer)
            }
            state.frozen = true
        }
    }

    /// Shuts the socket down so MHD notices and closes the connection even
    /// if the client never reads again. Safe until `markFinished`: MHD calls
    /// the completed callback before it closes the descriptor, so the number
    /// cannot have been reused for another connection yet.
    func shutdownSocket() {
        state.withLock { state in
            guard !state.finished, socket >= 0 else { return }
            _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
            if state.suspended && !state.frozen {
                // A suspended connection is not polled; let MHD see the error.
                state.suspended = false
                MHD_resume_connection(connection.pointer)
            }
        }
    }
}
