/// An event one gateway of the fleet published on the broker.
public struct FleetEvent: Sendable, Hashable {
    /// The gateway that published it.
    public var gateway: String
    /// Its event JSON: an object with `type`, as that gateway's
    /// `GET /v1/events` carries it (or `gateway-status`, made from its status topic).
    public var json: [UInt8]

    public init(gateway: String, json: [UInt8]) {
        self.gateway = gateway
        self.json = json
    }
}
