/// What opening a notification stream through the fleet gave: the answering
/// gateway's answer to the leased `subscribe` and, when it subscribed, the
/// stream to close when the client leaves.
public struct FleetNotificationOpening: Sendable {
    public var answer: FleetAnswer
    /// Nil when the answer is a failure (a problem to pass on as it is).
    public var stream: FleetNotificationStream?

    public init(answer: FleetAnswer, stream: FleetNotificationStream?) {
        self.answer = answer
        self.stream = stream
    }
}
