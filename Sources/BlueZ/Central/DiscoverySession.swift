/// What a discovery session reports.
public enum DiscoveryEvent: Sendable, Hashable {
    /// The device was heard and matches the session's filter (once per
    /// device per session).
    case discovered(Device)
    /// Another advertisement from a device already reported: every one
    /// with `allowDuplicates`, otherwise only when its data changed.
    case updated(Device)
    /// bluetoothd removed the device (it stopped advertising a while ago).
    case lost(Device)
    /// The device was not heard for the filter's `presenceTimeout`, though
    /// bluetoothd may still list it; it is `.discovered` again when heard.
    case silent(Device)
    /// Scanning stopped underneath the session (adapter powered off,
    /// bluetoothd gone); it resumes by itself when it can.
    case interrupted(BlueZError)
    /// Scanning started again after an interruption.
    case resumed
}

/// A running scan with its own filter: an `AsyncSequence` of discovery
/// events. The adapter scans while at least one session is being consumed;
/// the session ends when its consumer stops iterating (or its task is
/// cancelled), or when the central stops.
public struct DiscoverySession: AsyncSequence, Sendable {
    public typealias Element = DiscoveryEvent

    /// The adapter it scans (`hci0`).
    public let adapter: String
    public let filter: DiscoveryFilter
    /// How it hears advertisements.
    public let mode: ScanMode
    let stream: AsyncStream<DiscoveryEvent>

    public func makeAsyncIterator() -> AsyncStream<DiscoveryEvent>.AsyncIterator {
        stream.makeAsyncIterator()
    }
}

/// Notifications or indications of one characteristic, for one consumer:
/// an `AsyncSequence` of timestamped values, or, through `events`, of values
/// and the subscription's interruptions (BlueZ unreachable) and
/// resumptions. A consumer iterates one of the two, once.
///
/// The sequence throws a `BlueZError` when the subscription ends for a
/// reason other than the consumer's: `.notConnected` when the device
/// disconnects (its message carries bluetoothd's reason when there is one),
/// `.notConnected` also when bluetoothd (or the bus) came back but the
/// device is no longer connected, `.notFound` when the characteristic disappeared, `.cancelled` when
/// the central stopped. Iteration ending (or its task being cancelled)
/// unsubscribes.
public struct NotificationSubscription: AsyncSequence, Sendable {
    public typealias Element = CharacteristicValue

    /// The characteristic, as it was when the subscription began.
    public let characteristic: GATTCharacteristic
    public let device: BluetoothAddress
    public let adapter: String
    let stream: AsyncThrowingStream<NotificationEvent, any Error>

    /// The values and the subscription's interruptions and resumptions.
    public var events: AsyncThrowingStream<NotificationEvent, any Error> { stream }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    /// The values only.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<NotificationEvent, any Error>.AsyncIterator

        public mutating func next() async throws -> CharacteristicValue? {
            while let event = try await base.next() {
                if case .value(let value) = event { return value }
            }
            return nil
        }
    }
}
