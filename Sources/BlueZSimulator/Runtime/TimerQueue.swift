/// Events due at instants, earliest first: a binary min-heap.
///
/// The simulator keeps all its periodic work (advertisements, notifications,
/// battery drain, devices leaving range, stale devices expiring) in one
/// queue served by one task, so 1,000 advertisers cost one sleeping task
/// rather than 1,000.
struct TimerQueue<Event> {
    private struct Entry {
        var due: ContinuousClock.Instant
        var order: UInt64
        var event: Event
        func precedes(_ other: Entry) -> Bool { due < other.due || (due == other.due && order < other.order) }
    }

    private var heap: [Entry] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var nextDue: ContinuousClock.Instant? { heap.first?.due }

    mutating func schedule(_ event: Event, at due: ContinuousClock.Instant) {
        heap.append(Entry(due: due, order: nextOrder, event: event))
        nextOrder &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest event if it is due at `now`.
    mutating func popDue(_ now: ContinuousClock.Instant) -> (event: Event, due: ContinuousClock.Instant)? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.event, first.due)
    }

    mutating func removeAll() {
        heap.removeAll()
    }
}
