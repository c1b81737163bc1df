import BlueZ

/// Advertise on an adapter (an advertising instance of bluetoothd's);
/// stored so that a restart advertises again.
public struct AdvertiseCommand: Sendable {
    public let advertisement: Advertisement
    /// The adapter (nil: BlueZ's first).
    public let adapter: String?
    /// The definition in the form the store keeps and reads back at
    /// start-up (the client's JSON).
    public let stored: [UInt8]

    public init(advertisement: Advertisement, adapter: String?, stored: [UInt8]) {
        self.advertisement = advertisement
        self.adapter = adapter
        self.stored = stored
    }
}
