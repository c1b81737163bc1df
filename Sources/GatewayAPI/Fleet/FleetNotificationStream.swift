import Synchronization

/// A subscription held for this gateway by another gateway of the fleet,
/// under a lease (docs/fleet.md, "Notifications through the fleet").
/// `close()` ends it, once: the lease is given back and values stop.
public final class FleetNotificationStream: Sendable {
    /// The gateway that holds the subscription.
    public let gateway: String
    private let onClose: Mutex<(@Sendable () -> Void)?>

    public init(gateway: String, onClose: @escaping @Sendable () -> Void) {
        self.gateway = gateway
        self.onClose = Mutex(onClose)
    }

    /// Ends the lease; later calls do nothing.
    public func close() {
        let action = onClose.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
}
