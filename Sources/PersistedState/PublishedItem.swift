#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something the gateway publishes as a peripheral (a GATT application or
/// an advertisement), as stored, so that it is published again after a
/// restart.
public struct PublishedItem: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case application
        case advertisement
    }

    public var kind: Kind
    /// The caller's id (such as `app1`), unique per kind.
    public var id: String
    /// The adapter's id, such as `hci0`.
    public var adapter: String
    /// The definition as a JSON document the caller defines; the store
    /// keeps the bytes and does not read them.
    public var definition: [UInt8]
    /// For applications: the values clients set since it was published,
    /// by the characteristic's index in the caller's order.
    public var values: [Int: [UInt8]]
    /// When it was published.
    public var created: Date
    /// Who published it (the caller's name for a client), if known.
    public var owner: String?

    public init(
        kind: Kind, id: String, adapter: String, definition: [UInt8], values: [Int: [UInt8]] = [:],
        created: Date = Date(), owner: String? = nil
    ) {
        self.owner = owner
        self.kind = kind
        self.id = id
        self.adapter = adapter
        self.definition = definition
        self.values = values
        self.created = created
    }
}
