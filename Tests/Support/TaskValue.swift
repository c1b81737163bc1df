/// The value of `task`, cancelling the task if it has not finished within
/// `limit`: a wait that hangs fails its test rather than the whole run.
public func value<Success: Sendable>(of task: Task<Success, any Error>, within limit: Duration) async throws -> Success {
    let timer = Task {
        try? await Task.sleep(for: limit)
        task.cancel()
    }
    defer { timer.cancel() }
    return try await task.value
}

/// The value of `task`, which cannot fail, cancelling it after `limit` (it
/// then returns what it has).
public func value<Success: Sendable>(of task: Task<Success, Never>, within limit: Duration) async -> Success {
    let timer = Task {
        try? await Task.sleep(for: limit)
        task.cancel()
    }
    defer { timer.cancel() }
    return await task.value
}
