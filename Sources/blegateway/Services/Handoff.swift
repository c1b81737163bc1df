import AsyncPrimitives
import ServiceLifecycle

/// What one service of the gateway starts and another needs (the central
/// the API serves, the API the server listens for), handed over once it
/// has started. The services run at once in one `ServiceGroup`; a service
/// that needs another's product waits for it here, so that the start
/// follows the products: nothing is started before what it needs.
struct Handoff<Value: Sendable>: Sendable {
    /// The taker's service was told to shut down before the product came.
    struct Withdrawn: Error {}

    private let queue = WaitQueue<Value?, Void, Value>(nil)

    /// A handoff that already holds `value` (a product no service makes in
    /// this run, such as no store with `--no-state`).
    static func ready(_ value: Value) -> Handoff {
        let handoff = Handoff()
        handoff.hand(value)
        return handoff
    }

    /// Hands the product over to every taker, present and future.
    func hand(_ value: Value) {
        queue.withLock { state, waiters in
            guard state == nil else { return }
            state = value
            waiters.resumeAll(where: { _ in true }, with: .success(value))
        }
    }

    /// The product, once handed over. Throws when the calling service is
    /// told to shut down first (its start is called off, as is every
    /// start after it); other takers go on waiting.
    func take() async throws(Withdrawn) -> Value {
        let queue = self.queue
        do {
            return try await cancelWhenGracefulShutdown {
                try await queue.wait(tag: ()) { state, _ in state }
            }
        } catch {
            throw Withdrawn()
        }
    }
}
