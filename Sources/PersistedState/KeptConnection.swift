#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device the gateway keeps connected, as stored: named by adapter and
/// address, with the caller's options.
public struct KeptConnection: Sendable, Hashable {
    /// The adapter's id, such as `hci0`.
    public var adapter: String
    /// The device's address as the caller writes it (canonical form is the
    /// caller's choice; the store compares the strings as they are).
    public var address: String
    /// The keeping options (such as when to give up), as a JSON document
    /// the caller defines; the store keeps the bytes and does not read them,
    /// so a new option needs no schema change.
    public var options: [UInt8]
    /// When the connection was first kept.
    public var created: Date
    /// Who asked for it (the caller's name for a client), if known.
    public var owner: String?

    public init(
        adapter: String, address: String, options: [UInt8] = Array("{}".utf8), created: Date = Date(),
        owner: String? = nil
    ) {
        self.adapter = adapter
        self.address = address
        self.options = options
        self.created = created
        self.owner = owner
    }
}
