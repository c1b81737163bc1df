import BlueZ

/// Publish a GATT application (services, characteristics, descriptors) on
/// an adapter, for centrals to read, write and subscribe to; stored so that
/// a restart publishes it again.
public struct PublishApplicationCommand: Sendable {
    public let application: GATTApplication
    /// The adapter (nil: BlueZ's first).
    public let adapter: String?
    /// The definition in the form the store keeps and reads back at
    /// start-up (the client's JSON).
    public let stored: [UInt8]

    public init(application: GATTApplication, adapter: String?, stored: [UInt8]) {
        self.application = application
        self.adapter = adapter
        self.stored = stored
    }
}
