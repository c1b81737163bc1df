// Writes paced to the client: a producer that can wait (a task draining a
// source of its own) waits for room instead of overflowing the buffer.
extension StreamWriter {
    /// Queues `bytes` once the client has taken enough of what is queued:
    /// while more than `pacedLevel` bytes would be waiting, the call
    /// suspends until the client reads them. A burst larger than
    /// `maxBufferedBytes` (a scan's first report of every device around)
    /// is then delivered whole at the client's pace rather than dropping
    /// the client; the producer's own source holds what comes meanwhile.
    /// Call it from one task at a time. Returns false once the stream is
    /// no longer open, or when the calling task is cancelled.
    public func writePaced(_ bytes: [UInt8]) async -> Bool {
        while true {
            let full = state.withLock { state -> Bool? in
                guard case .open = state.phase else { return nil }
                return state.isFull(adding: bytes.count, level: pacedLevel)
            }
            guard let full else { return false }
            guard full else { return write(bytes) }
            await waitForRoom(bytes.count)
            if Task.isCancelled { return false }
        }
    }

    /// The queue's level above which `writePaced` waits: half the limit, so
    /// that a paced producer never comes near a drop.
    public var pacedLevel: Int { max(1, configuration.maxBufferedBytes / 2) }

    /// Suspends until the client's reads bring the queue down (see
    /// `roomWaiterToResume`), the stream ends, or the task is cancelled.
    private func waitForRoom(_ count: Int) async {
        let level = pacedLevel
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    guard case .open = state.phase, state.isFull(adding: count, level: level), !Task.isCancelled
                    else { return true }
                    state.takeRoomWaiter()?.resume()  // a second producer: it looks again
                    state.roomWaiter = waiter
                    return false
                }
                if ready { waiter.resume() }
            }
        } onCancel: {
            state.withLock { state in state.takeRoomWaiter() }?.resume()
        }
    }
}

extension StreamWriter.State {
    func isFull(adding count: Int, level: Int) -> Bool {
        bufferedBytes > 0 && bufferedBytes + count > level
    }

    /// The waiting paced write once the client has taken the queue down to
    /// half of `level` (so the producer then writes a batch, not one event
    /// per read), or the stream is no longer open; the caller resumes it
    /// outside the lock.
    mutating func roomWaiterToResume(level: Int) -> CheckedContinuation<Void, Never>? {
        guard roomWaiter != nil else { return nil }
        if case .open = phase, bufferedBytes > level / 2 { return nil }
        return takeRoomWaiter()
    }

    mutating func takeRoomWaiter() -> CheckedContinuation<Void, Never>? {
        defer { roomWaiter = nil }
        return roomWaiter
    }
}
