import DequeModule

/// A bounded first-in first-out queue that drops its oldest element to make
/// room: the policy for QoS 1/2 messages that wait while the broker is slow
/// or away (newer readings matter more than older ones, and memory stays
/// bounded on a small box that may be offline for hours).
public struct Outbox<Element>: Sendable where Element: Sendable {
    public let capacity: Int
    private var elements = Deque<Element>()
    /// How many elements were dropped to make room, in all.
    public private(set) var dropped = 0

    /// `capacity` of 0 keeps nothing: every append is dropped.
    public init(capacity: Int) {
        precondition(capacity >= 0, "an outbox's capacity cannot be negative")
        self.capacity = capacity
    }

    public var count: Int { elements.count }
    public var isEmpty: Bool { elements.isEmpty }

    /// Appends `element`; when full, drops the oldest element first and
    /// returns it (with capacity 0, drops `element` itself and returns it).
    @discardableResult
    public mutating func append(_ element: Element) -> Element? {
        guard capacity > 0 else {
            dropped += 1
            return element
        }
        var evicted: Element?
        if elements.count >= capacity {
            evicted = elements.removeFirst()
            dropped += 1
        }
        elements.append(element)
        return evicted
    }

    /// Removes and returns the oldest element.
    public mutating func popFirst() -> Element? { elements.popFirst() }
}
