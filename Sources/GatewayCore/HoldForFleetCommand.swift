/// Hold a device for the fleet on this gateway: keep it connected, with the
/// wish's standing subscriptions, for as long as the fleet gives it to this
/// gateway (the MQTT bridge decides that, docs/fleet.md). Nothing of a
/// hold is stored: the broker holds the fleet's wish, and a gateway that
/// restarts holds a device again only when the fleet gives it back.
public struct HoldForFleetCommand: Sendable, Hashable {
    public let wish: FleetKeep

    public init(wish: FleetKeep) {
        self.wish = wish
    }
}
