/// One consumer of a characteristic's shared subscription (a lease on its
/// `SubscriptionRecord`).
///
/// A stream is iterated by its consumer's task: right for a few consumers
/// that do work of their own per value (a standing subscription, MQTT). A
/// sink is called by the thread that delivers the notification, under the
/// central's state lock, so that a value reaches a thousand HTTP streams
/// without waking a thousand tasks: it must only hand the event on (queue
/// bytes, for instance) and never call back into the central.
enum NotificationConsumer: Sendable {
    case stream(AsyncThrowingStream<NotificationEvent, any Error>.Continuation)
    case sink(NotificationSink)

    func yield(_ event: NotificationEvent) {
        switch self {
        case .stream(let continuation): continuation.yield(event)
        case .sink(let sink): sink.receive(event)
        }
    }

    /// The subscription ended (`nil`: the consumer left by itself). Called
    /// after the state lock is released.
    func finish(_ error: BlueZError?) {
        switch self {
        case .stream(let continuation):
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        case .sink(let sink): sink.ended(error)
        }
    }
}

/// The receiving end of a lease taken with
/// `Central.subscribe(to:of:adapter:timeout:sink:)`.
public struct NotificationSink: Sendable {
    /// Each value, interruption and resumption, in order; called under the
    /// central's state lock (see `NotificationConsumer`).
    public let receive: @Sendable (NotificationEvent) -> Void
    /// Once, when the subscription ends without the lease being cancelled:
    /// why (the device disconnected, the characteristic went away, the
    /// central stopped). Called outside the lock.
    public let ended: @Sendable (BlueZError?) -> Void

    public init(
        receive: @escaping @Sendable (NotificationEvent) -> Void, ended: @escaping @Sendable (BlueZError?) -> Void
    ) {
        self.receive = receive
        self.ended = ended
    }
}
