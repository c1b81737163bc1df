import Synchronization

/// The end of a connection as something to wait for: `finish` records the
/// reason once and wakes every waiter; a waiter arriving later returns at
/// once; a waiter whose task is cancelled leaves without a reason.
final class ConnectionEnd: Sendable {
    private struct State {
        var reason: DBusError?
        var waiters: [UInt64: CheckedContinuation<DBusError, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func finish(_ reason: DBusError) {
        let waiters = state.withLock { state -> [CheckedContinuation<DBusError, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    func wait() async -> DBusError {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DBusError, Never>) in
                let reason = state.withLock { state -> DBusError? in
                    if let reason = state.reason { return reason }
                    if Task.isCancelled { return DBusError(.disconnected, "stopped waiting (cancelled)") }
                    state.waiters[id] = continuation
                    return nil
                }
                if let reason { continuation.resume(returning: reason) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: DBusError(.disconnected, "stopped waiting (cancelled)"))
        }
    }
}
