import AsyncPrimitives
import Synchronization

/// The central's events fanned out to its consumers, in two broadcasts by
/// what they take: those that take every event, and those that take only
/// link and BlueZ-state events (a kept connection, a standing
/// subscription: one per device). A characteristic value or an
/// advertisement goes to the first alone, so its cost does not grow with
/// the number of kept devices and standing subscriptions: with both in one
/// broadcast, each value visited every consumer's filter (2,000 of them
/// for 1,000 kept devices with a subscription each took a whole core at
/// 1,000 values/s, `make bench BENCH_PHASES=curves`).
final class CentralEventBroadcast: Sendable {
    private let everything = Broadcast<CentralEvent>()
    private let links = Broadcast<CentralEvent>()
    /// Which broadcast each handler id of `addHandler` is in, and its id
    /// there.
    private let handlers = Mutex<(next: UInt64, ids: [UInt64: (links: Bool, id: UInt64)])>((0, [:]))

    func subscribe(_ filter: CentralEventFilter, bufferSize: Int) -> AsyncStream<CentralEvent> {
        filter.passesValues
            ? everything.subscribe(bufferSize: bufferSize)
            : links.subscribe(bufferSize: bufferSize, filter: filter.check)
    }

    func addHandler(_ filter: CentralEventFilter, _ handler: @escaping @Sendable (CentralEvent) -> Void) -> UInt64? {
        let inLinks = !filter.passesValues
        let added =
            inLinks ? links.addHandler(filter: filter.check, handler) : everything.addHandler(handler)
        guard let added else { return nil }
        return handlers.withLock { handlers in
            handlers.next += 1
            handlers.ids[handlers.next] = (inLinks, added)
            return handlers.next
        }
    }

    func removeHandler(_ id: UInt64) {
        guard let handler = handlers.withLock({ $0.ids.removeValue(forKey: id) }) else { return }
        (handler.links ? links : everything).removeHandler(handler.id)
    }

    /// Gives `event` to the consumers that take it.
    func yield(_ event: CentralEvent) {
        everything.yield(event)
        if CentralEventFilter.concernsLinks(event), links.subscriberCount > 0 { links.yield(event) }
    }

    func finish() {
        everything.finish()
        links.finish()
    }

    /// Consumers of any kind; a hint without a lock (see `Broadcast`).
    var subscriberCount: Int { everything.subscriberCount + links.subscriberCount }

    /// Consumers that take characteristic values and advertisements.
    var unfilteredSubscriberCount: Int { everything.subscriberCount }
}
