/// A batch of past events for a stream catching up, oldest first: what a
/// source of past events (the replay buffer; a persistent store can serve
/// the same pages for what the buffer no longer holds) answers for "the
/// events after this id that this filter takes".
struct EventPage {
    /// Set when events after the position asked for are no longer kept:
    /// the id of the oldest one that is. The page goes on from there.
    var oldestAvailable: UInt64?
    /// The encoded events, in id order.
    var frames: [[UInt8]] = []
    /// Where the next page starts: the id of the last event this page went
    /// through, taken or skipped by the filter.
    var position: UInt64
    /// Whether the page went through the newest event kept: nothing is left
    /// to replay, and the stream can go live.
    var reachedNewest = false
}
