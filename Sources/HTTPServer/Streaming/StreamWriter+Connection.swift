import CMicroHTTPD

// The server's side of a StreamWriter: attaching it to a connection, reading
// from it on MHD's polling thread, and ending it exactly once.
extension StreamWriter {
    /// Binds the writer to the connection about to send it; polling thread.
    /// False if the writer already served another response.
    func attach(_ control: ConnectionControl) -> Bool {
        state.withLock { state in
            guard !state.attached else { return false }
            state.attached = true
            state.control = control
            if case .open = state.phase, let interval = configuration.heartbeatInterval {
                Heartbeats.shared.add(self, every: interval)
            }
            return true
        }
    }

    /// MHD's content reader: copies queued bytes into `buffer`; polling
    /// thread. With nothing to send it suspends the connection and returns
    /// 0 (returning 0 without suspending would make the polling thread spin).
    func read(into buffer: UnsafeMutableRawBufferPointer, serverStopping: Bool) -> Int {
        let level = pacedLevel
        let (count, refill, waiter) = state.withLock { state -> (Int, Bool, CheckedContinuation<Void, Never>?) in
            if state.bufferedBytes > 0 {
                let count = Self.take(from: &state, into: buffer)
                return (count, claimRefill(&state), state.roomWaiterToResume(level: level))
            }
            switch state.phase {
            case .finishing, .ended:
                return (Int(CMHD_CONTENT_READER_END_OF_STREAM), false, state.takeRoomWaiter())
            case .open:
                guard !serverStopping, let control = state.control, control.suspend() else {
                    state.phase = .finishing(state.control?.peerHungUp == true ? .clientDisconnected : .serverStopped)
                    return (Int(CMHD_CONTENT_READER_END_OF_STREAM), false, state.takeRoomWaiter())
                }
                // Suspended until the refill (or a live write) resumes it.
                return (0, claimRefill(&state), nil)
            }
        }
        waiter?.resume()
        // Off MHD's polling thread: the refill is the application's code.
        if refill { Task { await runRefills() } }
        return count
    }

    /// Ends the stream with `reason` after what is buffered; any thread.
    /// The writer terminates when the connection has sent the rest (a writer
    /// not yet attached still sends its buffer once its response goes out).
    func finish(_ reason: StreamEnd) {
        state.withLock { state in
            guard case .open = state.phase else { return }
            state.phase = .finishing(reason)
            state.control?.resume()
        }
    }

    /// MHD reported the request complete; polling thread. A reason set by
    /// `finish` or a drop wins over the termination code.
    func connectionCompleted(_ code: MHD_RequestTerminationCode) {
        let reason: StreamEnd = state.withLock { state in
            switch state.phase {
            case .finishing(let reason), .ended(let reason): return reason
            case .open:
                switch code {
                case .REQUEST_TERMINATED_COMPLETED_OK: return .finished
                case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: return .serverStopped
                default: return .clientDisconnected
                }
            }
        }
        terminate(reason)
    }

    /// Ends the writer for good and runs `onTermination`, once.
    func terminate(_ reason: StreamEnd) {
        var callback: (@Sendable (StreamEnd) -> Void)?
        var timers: [Task<Void, Never>] = []
        var waiter: CheckedContinuation<Void, Never>?
        state.withLock { state in
            waiter = state.takeRoomWaiter()
            if case .ended = state.phase { return }
            state.phase = .ended(reason)
            state.chunks.removeAll()
            state.headOffset = 0
            state.bufferedBytes = 0
            state.control = nil
            callback = state.onTermination
            timers = state.timers
            state.onTermination = nil
            state.timers = []
            state.refill = nil
        }
        waiter?.resume()
        for timer in timers { timer.cancel() }
        Heartbeats.shared.remove(self)
        // Off MHD's polling thread: the callback is the application's code.
        if let callback { Task { callback(reason) } }
    }

    /// Replaces the buffer with the drop notice and ends the stream; the
    /// socket is shut down if the client has not taken it within the grace
    /// period (a client that never reads would otherwise hold the
    /// connection until the idle timeout).
    func drop(_ state: inout State) {
        state.chunks = [configuration.dropNotice]
        state.headOffset = 0
        state.bufferedBytes = configuration.dropNotice.count
        state.phase = .finishing(.tooSlow)
        guard let control = state.control else { return }
        control.resume()
        let grace = configuration.dropGracePeriod
        state.timers.append(Task {
            try? await Task.sleep(for: grace)
            if !Task.isCancelled { control.shutdownSocket() }
        })
    }

    /// A heartbeat interval passed (see `Heartbeats`): sends the heartbeat
    /// unless something was written since the last one. False once the
    /// stream is no longer open.
    func heartbeatDue() -> Bool {
        state.withLock { state in
            guard case .open = state.phase else { return false }
            if state.wroteSinceHeartbeat {
                state.wroteSinceHeartbeat = false
            } else if state.bufferedBytes == 0 {
                state.chunks.append(configuration.heartbeat)
                state.bufferedBytes = configuration.heartbeat.count
                state.control?.resume()
            }
            return true
        }
    }

    private static func take(from state: inout State, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        while written < buffer.count, let head = state.chunks.first {
            let count = min(head.count - state.headOffset, buffer.count - written)
            head.withUnsafeBytes { source in
                let slice = UnsafeRawBufferPointer(rebasing: source[state.headOffset..<(state.headOffset + count)])
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)]).copyMemory(from: slice)
            }
            written += count
            state.headOffset += count
            if state.headOffset == head.count {
                state.chunks.removeFirst()
                state.headOffset = 0
            }
        }
        state.bufferedBytes -= written
        return written
    }
}
