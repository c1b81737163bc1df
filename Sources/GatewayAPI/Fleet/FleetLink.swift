/// The fleet attached to a gateway, and whether its events are followed.
struct FleetLink: Sendable {
    var fleet: (any FleetAccess)?
    var followingEvents = false
}
