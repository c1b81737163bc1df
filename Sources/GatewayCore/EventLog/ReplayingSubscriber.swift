/// A subscriber that can catch up on past events (`Last-Event-ID`): it
/// takes them in the log's encoding (the store keeps them only so), a
/// batch at a time, at the pace its reader takes them.
public protocol ReplayingSubscriber<Event>: EventLogSubscriber {
    /// A past event (or a gap), encoded. False once the subscriber takes
    /// no more (its stream ended), which ends the replay.
    func replay(_ frame: [UInt8]) -> Bool

    /// About how many bytes the first batch holds.
    var replayBudget: Int { get }

    /// Asks for the rest of the replay at the reader's pace: `next` writes
    /// a batch of about `budget` bytes with `replay` and returns whether
    /// more is left; once it returns false the subscriber is live.
    func pull(_ next: @escaping @Sendable (_ budget: Int) async -> Bool)
}
