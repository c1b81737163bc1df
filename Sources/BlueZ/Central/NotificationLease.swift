import Synchronization

/// A consumer's share of a characteristic's subscription, taken with a
/// `NotificationSink`. Cancelling it (or releasing it) gives the share
/// back: the last one to go sends StopNotify.
public final class NotificationLease: Sendable {
    /// The characteristic, as it was when the lease was taken.
    public let characteristic: GATTCharacteristic
    public let device: BluetoothAddress
    public let adapter: String
    private let release: Mutex<(@Sendable () -> Void)?>

    init(
        characteristic: GATTCharacteristic, device: BluetoothAddress, adapter: String,
        release: @escaping @Sendable () -> Void
    ) {
        self.characteristic = characteristic
        self.device = device
        self.adapter = adapter
        self.release = Mutex(release)
    }

    /// Gives the share back; the sink stops receiving soon after. Safe from any
    /// thread, any number of times (the work runs on a task of its own, so
    /// a stream's termination handler may call it).
    public func cancel() {
        release.withLock { $0.take() }?()
    }

    deinit { cancel() }
}
