/// Runs async work one item at a time, in the order it was enqueued: a
/// peripheral's operations reach the gateway in the order the app asked
/// for them, as Core Bluetooth's do (tasks started one by one would race).
final class SerialWork: Sendable {
    typealias Work = @Sendable () async -> Void
    private let continuation: AsyncStream<Work>.Continuation

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Work.self)
        self.continuation = continuation
        Task {
            for await work in stream { await work() }
        }
    }

    deinit { continuation.finish() }

    func enqueue(_ work: @escaping Work) { continuation.yield(work) }
}
