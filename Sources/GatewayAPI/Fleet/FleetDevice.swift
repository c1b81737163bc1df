#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore

/// One device as the whole fleet knows it: who hears it, where it is
/// connected, who keeps it.
public struct FleetDevice: Sendable, Hashable {
    /// One gateway's (and adapter's) hearing of the device.
    public struct Hearing: Sendable, Hashable {
        public var gateway: String
        public var adapter: String?
        /// The latest RSSI the gateway published (dBm).
        public var rssi: Int
        /// An exponential moving average of the RSSIs it published, each new
        /// one weighing 1/4 (dBm).
        public var rssiAverage: Double
        /// When the gateway last published it (its own timestamp).
        public var lastSeen: Date
        /// Younger than the fleet's presence freshness (60 s by default):
        /// only a fresh hearing counts for routing.
        public var fresh: Bool

        public init(gateway: String, adapter: String?, rssi: Int, rssiAverage: Double, lastSeen: Date, fresh: Bool) {
            self.gateway = gateway
            self.adapter = adapter
            self.rssi = rssi
            self.rssiAverage = rssiAverage
            self.lastSeen = lastSeen
            self.fresh = fresh
        }
    }

    /// One gateway keeping the device connected.
    public struct Keeping: Sendable, Hashable {
        public var gateway: String
        public var adapter: String?
        /// `connected`, `connecting` or `given-up`.
        public var status: String?

        public init(gateway: String, adapter: String?, status: String?) {
            self.gateway = gateway
            self.adapter = adapter
            self.status = status
        }
    }

    /// Canonical address (`AA:BB:CC:DD:EE:FF`).
    public var address: String
    /// Strongest average first.
    public var heardBy: [Hearing]
    /// The gateways whose retained connection topic says connected.
    public var connectedOn: [String]
    public var keptBy: [Keeping]
    /// The fleet's wish when the fleet keeps it (`"fleet": true`).
    public var fleetKeep: FleetKeep?
    /// The gateway that holds it for the fleet, if one does, and the
    /// number of its holding (each new holder adds one).
    public var owner: String?
    public var ownerEpoch: Int

    public init(
        address: String, heardBy: [Hearing], connectedOn: [String], keptBy: [Keeping], fleetKeep: FleetKeep? = nil,
        owner: String? = nil, ownerEpoch: Int = 0
    ) {
        self.address = address
        self.heardBy = heardBy
        self.connectedOn = connectedOn
        self.keptBy = keptBy
        self.fleetKeep = fleetKeep
        self.owner = owner
        self.ownerEpoch = ownerEpoch
    }
}
