import Synchronization

/// One FIFO lane of work per key: operations with the same key (a device's
/// path, an adapter's path) run one at a time in arrival order; different
/// keys run concurrently.
///
/// This is how no client ever sees bluetoothd's `InProgress`: bluetoothd
/// refuses a second Connect, a second ReadValue of one characteristic and
/// so on while the first is pending, so the central never sends them
/// concurrently for one device.
final class KeyedSerialQueue<Key: Hashable & Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Lane {
        var busy = false
        var waiters: [Waiter] = []
    }

    private struct State {
        var lanes: [Key: Lane] = [:]
        var nextID: UInt64 = 1
    }

    private let state = Mutex(State())

    /// Runs `body` when every earlier operation of `key` has finished.
    /// Waiting ends with `BlueZError(.timeout)` at `deadline`, and with
    /// `CancellationError` when the task is cancelled.
    func run<T: Sendable>(
        _ key: Key, deadline: ContinuousClock.Instant, _ body: () async throws -> T
    ) async throws -> T {
        try await acquire(key, deadline: deadline)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: Key, deadline: ContinuousClock.Instant) async throws {
        // Fast path: a free lane costs one lock and no task.
        let id: UInt64? = state.withLock { state in
            if state.lanes[key, default: Lane()].busy {
                defer { state.nextID += 1 }
                return state.nextID
            }
            state.lanes[key, default: Lane()].busy = true
            return nil
        }
        guard let id else { return }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            self?.abandon(key, id, with: BlueZError(.timeout, "timed out waiting for earlier operations on the device"))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let handedOver = state.withLock { state -> Bool in
                    // The lane may have been released between the fast
                    // path and now.
                    if !state.lanes[key, default: Lane()].busy {
                        state.lanes[key, default: Lane()].busy = true
                        return true
                    }
                    state.lanes[key, default: Lane()].waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if handedOver { continuation.resume() }
            }
        } onCancel: {
            abandon(key, id, with: CancellationError())
        }
    }

    /// Removes a waiter that gave up (if it is still waiting) and fails it.
    private func abandon(_ key: Key, _ id: UInt64, with error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.lanes[key]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.lanes[key]?.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// Hands the lane to the next waiter, or frees it.
    private func release(_ key: Key) {
        let next = state.withLock { state -> Waiter? in
            guard var lane = state.lanes[key] else { return nil }
            if lane.waiters.isEmpty {
                state.lanes[key] = nil
                return nil
            }
            let next = lane.waiters.removeFirst()
            lane.busy = true
            state.lanes[key] = lane
            return next
        }
        next?.continuation.resume()
    }
}
