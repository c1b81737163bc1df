#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ

/// One gateway of the fleet as the broker shows it.
public struct FleetGateway: Sendable, Hashable {
    /// Its gateway id (`--gateway-id`).
    public var id: String
    /// Its retained status says `online`.
    public var online: Bool
    /// When it last published something this gateway received (by the
    /// timestamp in the message when there is one, else on arrival).
    public var lastSeen: Date?
    /// Devices it publishes a fresh presence for.
    public var devicesHeard: Int
    /// Devices its retained connection topic says are connected.
    public var devicesConnected: Int
    /// Devices it keeps connected.
    public var devicesKept: Int
    /// Its adapters' connection slots as it last published them; nil when
    /// it publishes none.
    public var connectionSlots: [AdapterSlots]?
    /// The gateway answering this request.
    public var isSelf: Bool

    public init(
        id: String, online: Bool, lastSeen: Date?, devicesHeard: Int, devicesConnected: Int, devicesKept: Int,
        connectionSlots: [AdapterSlots]? = nil, isSelf: Bool
    ) {
        self.id = id
        self.online = online
        self.lastSeen = lastSeen
        self.devicesHeard = devicesHeard
        self.devicesConnected = devicesConnected
        self.devicesKept = devicesKept
        self.connectionSlots = connectionSlots
        self.isSelf = isSelf
    }
}
