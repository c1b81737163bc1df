import DequeModule

/// The last `capacity` events, oldest first, for streams that resume from
/// `Last-Event-ID`. Ids increase along the buffer but may skip (an id
/// reserved for one stream's own event is never buffered), so what was
/// lost is told by the newest id pushed out, not by the oldest kept.
struct ReplayBuffer<Event: LoggableEvent> {
    let capacity: Int
    private var entries = Deque<EventLog<Event>.Entry>()
    /// The id of the newest event pushed out to make room, or (while none
    /// was) of the newest event before this buffer started: the buffer
    /// holds every kept event after it.
    private(set) var evictedThrough: UInt64

    /// The most events one page goes through (taken or skipped), so that a
    /// filter that takes few of many events still answers in bounded time.
    static var pageScanLimit: Int { 4096 }

    /// A buffer whose first event comes after `startingAfter` (the ids
    /// before it were given by an earlier run, kept in a store if at all).
    init(capacity: Int, startingAfter: UInt64 = 0) {
        self.capacity = max(1, capacity)
        self.evictedThrough = startingAfter
    }

    /// The id of the oldest event kept.
    var oldestID: UInt64? { entries.first?.id }

    mutating func append(_ entry: EventLog<Event>.Entry) {
        if entries.count == capacity, let oldest = entries.popFirst() { evictedThrough = oldest.id }
        entries.append(entry)
    }

    /// The events after `position` that `filter` takes, encoded by
    /// `encoding`, about `budget` bytes of them (at least one, when there
    /// is one).
    mutating func page(
        after position: UInt64, filter: EventFilter, budget: Int, encoding: any EventEncoding<Event>
    ) -> EventPage {
        var page = EventPage(position: position)
        if position < evictedThrough {
            page.oldestAvailable = entries.first?.id
            page.position = evictedThrough
        }
        var index = firstIndex(after: page.position)
        var bytes = 0
        var scanned = 0
        while index < entries.count, scanned < Self.pageScanLimit {
            if filter.matches(type: entries[index].type, device: entries[index].device) {
                let frame = entries[index].encodedFrame(by: encoding)
                if bytes > 0, bytes + frame.count > budget { break }
                page.frames.append(frame)
                bytes += frame.count
            }
            page.position = entries[index].id
            index += 1
            scanned += 1
        }
        page.reachedNewest = index == entries.count
        return page
    }

    /// The index of the first event with an id above `id` (binary search:
    /// ids increase along the buffer).
    private func firstIndex(after id: UInt64) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
