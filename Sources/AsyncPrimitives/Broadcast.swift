import Synchronization

/// Events fanned out to every `AsyncStream` handed out by `subscribe`, and
/// to every handler added by `addHandler`, in one order for all of them,
/// until `finish()`.
///
/// Values are yielded under the lock, so concurrent `yield`s reach every
/// subscriber in the same order. A subscriber's termination handler
/// therefore must not wait for that lock: when a consumer's task is
/// cancelled, the handler runs while the Swift runtime holds that task's
/// status lock, and a `yield` under our lock needs the status lock to wake
/// the task. The handler removes the subscriber from a new task instead.
public final class Broadcast<Element: Sendable>: Sendable {
    private struct Sink {
        enum Target {
            case stream(AsyncStream<Element>.Continuation)
            case handler(@Sendable (Element) -> Void)
        }

        let target: Target
        /// What this subscriber is given (nil: everything), checked before
        /// its task is woken.
        let filter: (@Sendable (Element) -> Bool)?

        func give(_ value: Element) {
            switch target {
            case .stream(let continuation): continuation.yield(value)
            case .handler(let handler): handler(value)
            }
        }
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
        guard let id = add(Sink(target: .stream(continuation), filter: filter)) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            Task { self?.remove(id) }
        }
        return stream
    }

    /// Calls `handler` with every value yielded from now on (that `filter`
    /// passes), on the yielding thread and in yield order, with no task to
    /// wake: for a consumer that only hands each value on (to a log, to a
    /// queue). It runs under the lock that orders the values, so it must
    /// be quick and must neither block nor call back into this broadcast.
    /// Returns an id for `removeHandler`, nil after `finish()`.
    @discardableResult
    public func addHandler(
        filter: (@Sendable (Element) -> Bool)? = nil, _ handler: @escaping @Sendable (Element) -> Void
    ) -> UInt64? {
        add(Sink(target: .handler(handler), filter: filter))
    }

    /// Stops calling the handler `id`; a call under way on another thread
    /// finishes first.
    public func removeHandler(_ id: UInt64) { remove(id) }

    private func add(_ sink: Sink) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.sinks[state.nextID] = sink
            count(state)
            return state.nextID
        }
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
            for sink in state.sinks.values where sink.filter?(value) ?? true { sink.give(value) }
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
        for sink in sinks {
            if case .stream(let continuation) = sink.target { continuation.finish() }
        }
    }

    /// How many streams and handlers there are; a hint without the lock
    /// (one may be coming or going meanwhile), for skipping work nobody
    /// would see.
    public var subscriberCount: Int { sinkCount.load(ordering: .relaxed) }

    /// How many streams and handlers take every value (no filter); a hint,
    /// as `subscriberCount`.
    public var unfilteredSubscriberCount: Int { unfilteredCount.load(ordering: .relaxed) }
}
