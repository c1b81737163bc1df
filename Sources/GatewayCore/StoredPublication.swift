import BlueZ
import PersistedState

/// A publication as the store gave it back at start-up, its definition
/// read by the door that wrote it.
public struct StoredPublication: Sendable {
    /// What was published, or why this gateway cannot read it.
    public enum Definition: Sendable {
        case application(GATTApplication)
        case advertisement(Advertisement)
        case unreadable(String)
    }

    public let kind: PublishedItem.Kind
    public let id: String
    public let adapter: String
    public let definition: Definition
    /// The values clients set on an application's characteristics, by index.
    public let values: [Int: [UInt8]]
    /// Who published it (nil: recorded before owners were).
    public let owner: String?

    public init(
        kind: PublishedItem.Kind, id: String, adapter: String, definition: Definition, values: [Int: [UInt8]] = [:],
        owner: String?
    ) {
        self.kind = kind
        self.id = id
        self.adapter = adapter
        self.definition = definition
        self.values = values
        self.owner = owner
    }
}
