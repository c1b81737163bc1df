/// One consumer of a characteristic's shared subscription (a lease on its
/// `SubscriptionRecord`).
///
/// A stream is iterated by its consumer's task: right for a few consumers
/// that do work of their own per value (a standing subscription, MQTT). A
/// sink is called by the thread that delivers the notification (usually the
/// bus connection's loop thread, which received it), after the central's
/// state lock is released, so that a value reaches a thousand HTTP streams
/// without waking a thousand tasks: it must only hand the event on (queue
/// bytes, for instance), since every delivery behind it waits.
enum NotificationConsumer: Sendable {
    case stream(AsyncThrowingStream<NotificationEvent, any Error>.Continuation)
    case sink(NotificationSink)

    func yield(_ event: NotificationEvent) {
        switch self {
        case .stream(let continuation): continuation.yield(event)
        case .sink(let sink): sink.receive(event)
        }
    }

    /// The subscription ended (`nil`: the consumer left by itself). A
    /// stream throws the end's error.
    func finish(_ end: SubscriptionEnd?) {
        switch self {
        case .stream(let continuation):
            if let end { continuation.finish(throwing: end.error) } else { continuation.finish() }
        case .sink(let sink): sink.ended(end)
        }
    }
}

/// The receiving end of a lease taken with
/// `Central.subscribe(to:of:adapter:timeout:sink:)`.
public struct NotificationSink: Sendable {
    /// Each value, interruption and resumption, in order, one at a time;
    /// called outside the central's lock (see `NotificationConsumer`).
    public let receive: @Sendable (NotificationEvent) -> Void
    /// Once, after the last `receive`, when the subscription ends without
    /// the lease being cancelled: why (the device disconnected, the
    /// characteristic went away, BlueZ came back without the device, the
    /// central stopped).
    public let ended: @Sendable (SubscriptionEnd?) -> Void

    public init(
        receive: @escaping @Sendable (NotificationEvent) -> Void, ended: @escaping @Sendable (SubscriptionEnd?) -> Void
    ) {
        self.receive = receive
        self.ended = ended
    }
}
