import BlueZ
import GatewayAPI
import GatewayCore

/// What one gateway knows and does about the devices the fleet keeps: the
/// wishes, who holds each (`FleetOwnership`), and its own part.
struct FleetKeeping {
    /// A device this gateway holds for the fleet.
    struct Holding {
        var epoch: Int
        /// Since when its link has been down (nil while connected, and
        /// before it was first up: a first connect that takes long is not
        /// a loss; failed attempts say when it is hopeless).
        var downSince: ContinuousClock.Instant?
        /// The link has been up since this gateway took the device.
        var wasUp = false
    }

    var wishes: [String: FleetKeep] = [:]
    var ownership = FleetOwnership()
    /// When each device last became free in this gateway's eyes.
    var freeSince: [String: ContinuousClock.Instant] = [:]
    /// When each gateway was last seen to go offline (its status or Will).
    var offlineSince: [String: ContinuousClock.Instant] = [:]
    /// Gateways passed over for a device until the instant given.
    var penalties: [String: [String: ContinuousClock.Instant]] = [:]
    /// The take this gateway last sent for each device.
    var takesSent: [String: (epoch: Int, at: ContinuousClock.Instant)] = [:]
    var holding: [String: Holding] = [:]
    /// Held devices being let go: disconnecting (nil), or released at
    /// that instant and waiting for the release to come back from the
    /// broker (this gateway must not take them up again meanwhile).
    var releasing: [String: ContinuousClock.Instant?] = [:]
    /// When this gateway last heard each device advertise itself.
    var heardLocally: [String: ContinuousClock.Instant] = [:]
    /// The latest heartbeat of this gateway's that came back from the
    /// broker: when it was sent.
    var lastEcho: ContinuousClock.Instant?
    var lastBeat: ContinuousClock.Instant?
    /// When this gateway subscribed to the fleet's keep topics (it takes
    /// nothing until the retained state had time to arrive).
    var followedAt: ContinuousClock.Instant?
    /// The connection slots this gateway last published on this broker
    /// connection (`publishSlotsIfChanged`).
    var publishedSlots: [AdapterSlots]?

    func isPenalized(_ gateway: String, for device: String, now: ContinuousClock.Instant) -> Bool {
        penalties[device]?[gateway].map { now < $0 } ?? false
    }
}
