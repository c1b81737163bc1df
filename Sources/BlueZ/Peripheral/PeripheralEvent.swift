/// What centrals do with the gateway's applications (`Peripheral.events()`).
public enum PeripheralEvent: Sendable, Hashable {
    /// A central wrote a characteristic whose writes the gateway stores.
    case written(AttributeAccess, value: [UInt8])
    /// A central read a characteristic answered from the stored value.
    case read(AttributeAccess)
    /// A central's request waits for a client's answer (`Peripheral.respond`).
    case request(DelegatedRequest)
    /// A delegated request got no answer in time: the central was answered
    /// with an ATT error.
    case requestExpired(id: String, AttributeAccess)
    /// bluetoothd started or stopped notifying a characteristic: its first
    /// central subscribed, or its last one unsubscribed.
    case subscribed(AttributeAccess)
    case unsubscribed(AttributeAccess)
    /// A central that talked to an application for the first time on this
    /// connection of bluetoothd's (from the `device` option of its request).
    case centralSeen(application: String, adapter: String, device: BluetoothAddress)
    /// A central seen by an application disconnected from the adapter
    /// (its `Device1.Connected` turned false); its next request is a
    /// `centralSeen` again.
    case centralGone(application: String, adapter: String, device: BluetoothAddress, reason: String?)
    /// An application or advertisement was registered with bluetoothd
    /// again (after bluetoothd restarted or the bus came back), or could not be.
    case reregistered(kind: String, id: String, error: String?)
}

/// Which attribute of which application a central used, and who it was.
public struct AttributeAccess: Sendable, Hashable {
    public var application: String
    public var adapter: String
    public var service: BluetoothUUID
    public var characteristic: BluetoothUUID
    /// The central, when bluetoothd named it (`device` option).
    public var device: BluetoothAddress?

    public init(
        application: String, adapter: String, service: BluetoothUUID, characteristic: BluetoothUUID,
        device: BluetoothAddress?
    ) {
        self.application = application
        self.adapter = adapter
        self.service = service
        self.characteristic = characteristic
        self.device = device
    }
}

/// A central's read or write that a client of the gateway answers.
public struct DelegatedRequest: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case read, write
    }

    public var id: String
    public var kind: Kind
    public var access: AttributeAccess
    public var offset: UInt16
    /// For writes: the bytes the central wrote.
    public var value: [UInt8]?
    /// When the central is answered with an ATT error if no answer came.
    public var deadline: ContinuousClock.Instant
    /// The same deadline in milliseconds from the event.
    public var timeoutMilliseconds: Int
}

/// A client's answer to a delegated request: the value to return (reads),
/// acceptance (writes, an empty value) or an ATT error code.
public enum RequestAnswer: Sendable, Hashable {
    case value([UInt8])
    case attError(UInt8)
}
