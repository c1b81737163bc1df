import AsyncPrimitives

/// A call into a consumer of the central (a notification sink or stream,
/// an event handler or stream, a waiting operation) that the central decided
/// under its state lock and makes after releasing it (`DeliveryQueue`).
enum Delivery: Sendable {
    /// An event for every consumer of one characteristic's subscription.
    /// The record's table is shared, not copied: holding it costs a
    /// reference count.
    case notification(NotificationEvent, to: [UInt64: NotificationConsumer])
    /// A consumer's subscription ended (nil: the consumer left by itself).
    case ended(NotificationConsumer, SubscriptionEnd?)
    /// An event for the streams of `Central.events()` and the event handlers.
    case event(CentralEvent)
    /// A waiting operation's outcome.
    case outcome(Promise<Void, BlueZError>, Result<Void, BlueZError>)
    /// Ends the streams of `Central.events()`.
    case finishEvents
}

/// The deliveries decided under the central's lock and not yet made, in the
/// order they were decided. Plain data, kept in `CentralState`.
///
/// One thread at a time delivers: the one that finds nothing being
/// delivered when it releases the lock claims the pending deliveries, makes
/// them outside the lock, and goes on with whatever other threads queued
/// meanwhile until none is left. Consumers therefore see deliveries in the
/// order of the mirror's changes, whichever threads decided them, with no
/// lock of the central held while a consumer runs; a consumer that calls
/// the central only queues more, behind its own delivery.
///
/// Two buffers take turns (one filling under the lock, one being
/// delivered), each emptied keeping its capacity: once they have grown to
/// the largest batch, queueing a delivery allocates nothing.
struct DeliveryQueue {
    private var pending: [Delivery] = []
    private var spare: [Delivery] = []
    /// A thread is delivering (it holds the other buffer).
    private var delivering = false

    var isEmpty: Bool { pending.isEmpty }

    mutating func append(_ delivery: Delivery) {
        pending.append(delivery)
    }

    /// The pending deliveries, for the caller to make after releasing the
    /// lock and then to hand back with `next(after:)`; nil when there are
    /// none or another thread is delivering (it will make them).
    mutating func claim() -> [Delivery]? {
        guard !delivering, !pending.isEmpty else { return nil }
        delivering = true
        var batch: [Delivery] = []
        swap(&batch, &spare)
        swap(&batch, &pending)
        return batch
    }

    /// Takes back `delivered` (emptied by the caller, outside the lock) and
    /// puts in it what was queued meanwhile; returns false, ending the
    /// caller's turn as deliverer, when nothing was.
    mutating func next(after delivered: inout [Delivery]) -> Bool {
        if pending.isEmpty {
            delivering = false
            swap(&spare, &delivered)
            return false
        }
        swap(&delivered, &pending)
        return true
    }
}
