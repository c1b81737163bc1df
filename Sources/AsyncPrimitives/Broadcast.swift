import Synchronization

/// Events fanned out to every `AsyncStream` handed out by `subscribe`, in
/// one order for all of them, until `finish()`.
///
/// Values are yielded under the lock, so concurrent `yield`s reach every
/// subscriber in the same order. A subscriber's termination handler
/// therefore must not wait for that lock: when a consumer's task is
/// cancelled, the handler runs while the Swift runtime holds that task's
/// status lock, and a `yield` under our lock needs the status lock to wake
/// the task. The handler removes the subscriber from a new task instead.
public final class Broadcast<Element: Sendable>: Sendable {
    private struct Sink {
        let continuation: AsyncStream<Element>.Continuation
        /// What this subscriber is given (nil: everything), checked before
        /// its task is woken.
        let filter: (@Sendable (Element) -> Bool)?
    }

    private struct State {
        var sinks: [UInt64: Sink] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    /// The number of sinks, and of those without a filter, readable
    /// without the lock (changed under it).
    private let sinkCount = Atomic(0)
    private let unfilteredCount = Atomic(0)

    public init() {}

    /// A stream of the values yielded from now on, keeping the newest
    /// `bufferSize` a slow consumer has not taken; finished at once after
    /// `finish()`. With a `filter`, only the values it passes.
    public func subscribe(
        bufferSize: Int = 1024, filter: (@Sendable (Element) -> Bool)? = nil
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let id = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.sinks[state.nextID] = Sink(continuation: continuation, filter: filter)
            count(state)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            Task { self?.remove(id) }
        }
        return stream
    }

    private func remove(_ id: UInt64) {
        state.withLock { state in
            state.sinks[id] = nil
            count(state)
        }
    }

    private func count(_ state: State) {
        sinkCount.store(state.sinks.count, ordering: .relaxed)
        unfilteredCount.store(state.sinks.values.count { $0.filter == nil }, ordering: .relaxed)
    }

    /// Gives `value` to every subscriber whose filter passes it.
    public func yield(_ value: Element) {
        state.withLock { state in
            for sink in state.sinks.values where sink.filter?(value) ?? true { sink.continuation.yield(value) }
        }
    }

    /// Ends every stream; later subscribers get a finished stream.
    public func finish() {
        let sinks = state.withLock { state in
            state.finished = true
            defer {
                state.sinks = [:]
                count(state)
            }
            return Array(state.sinks.values)
        }
        for sink in sinks { sink.continuation.finish() }
    }

    /// How many streams are open; a hint without the lock (a stream may be
    /// opening or closing meanwhile), for skipping work nobody would see.
    public var subscriberCount: Int { sinkCount.load(ordering: .relaxed) }

    /// How many streams take every value (no filter); a hint, as
    /// `subscriberCount`.
    public var unfilteredSubscriberCount: Int { unfilteredCount.load(ordering: .relaxed) }
}
