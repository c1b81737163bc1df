#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A characteristic subscription the gateway keeps whether or not a client
/// listens, as stored.
public struct StandingSubscription: Sendable, Hashable, Identifiable {
    /// How the characteristic names itself.
    public enum Characteristic: Sendable, Hashable {
        /// By UUID, as the caller writes it (such as `2a37`).
        case uuid(String)
        /// By its ATT handle.
        case handle(UInt16)
    }

    /// How values are delivered.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case notify
        case indicate
    }

    /// The store's id: assigned when the subscription is added, never
    /// reused (not even after a restart or a removal).
    public let id: Int64
    public var adapter: String
    public var address: String
    /// The service UUID, when the characteristic's UUID alone is ambiguous.
    public var service: String?
    public var characteristic: Characteristic
    public var mode: Mode
    public var created: Date
    /// Who created it (the caller's name for a client), if known.
    public var owner: String?

    public init(
        id: Int64, adapter: String, address: String, service: String? = nil, characteristic: Characteristic, mode: Mode,
        created: Date, owner: String? = nil
    ) {
        self.owner = owner
        self.id = id
        self.adapter = adapter
        self.address = address
        self.service = service
        self.characteristic = characteristic
        self.mode = mode
        self.created = created
    }
}
