import GatewayAPI
import MQTT

/// Where each gateway event goes, and how. The tree is designed so that a
/// fleet on one broker can share it: everything a gateway says is under its
/// own `<prefix>/<gateway-id>/`, devices are named by address one level
/// below `devices/`, and commands sit under `cmd/` so that a later
/// `<prefix>/any/cmd/…` tree can be routed without renaming anything.
struct Topics {
    /// `<prefix>`, shared by the fleet.
    let prefix: String
    /// `<prefix>/<gateway-id>`.
    let base: String

    /// The retained `online` / `offline` availability (also the Last Will).
    var status: String { "\(base)/status" }
    /// Commands: `cmd/<command>`.
    var commands: String { "\(base)/cmd/+" }
    func command(_ name: String) -> String { "\(base)/cmd/\(name)" }
    /// This gateway's retained presence for a device it hears.
    func presence(_ device: String) -> String { "\(base)/devices/\(device)/presence" }
    /// This gateway's retained keep state for a device it keeps connected.
    func keep(_ device: String) -> String { "\(base)/devices/\(device)/keep" }
    /// Commands to whichever gateway of the fleet suits the device best.
    var fleetCommands: String { "\(prefix)/any/cmd/+" }
    /// Claims of fleet commands, one topic per device (`none` for a
    /// command that names none).
    var fleetClaims: String { "\(prefix)/any/claims/+" }
    func fleetClaim(_ device: String?) -> String { "\(prefix)/any/claims/\(device ?? "none")" }
    /// The fleet's wish to keep a device (retained).
    var fleetKeeps: String { "\(prefix)/any/keep/+" }
    func fleetKeep(_ device: String) -> String { "\(prefix)/any/keep/\(device)" }
    /// Who holds a fleet-kept device: take, hold and release.
    var fleetOwners: String { "\(prefix)/any/owner/+" }
    func fleetOwner(_ device: String) -> String { "\(prefix)/any/owner/\(device)" }
    /// This gateway's heartbeat, which it follows itself: its echo proves
    /// the broker still hears it.
    var heartbeat: String { "\(base)/heartbeat" }
    /// The leases this gateway renews, for its notification streams that
    /// other gateways hold, and every gateway's.
    var leases: String { "\(base)/leases" }
    var fleetLeases: String { "\(prefix)/+/leases" }
    /// This gateway's connection slots (retained), and every gateway's.
    var slots: String { "\(base)/slots" }
    var fleetSlots: String { "\(prefix)/+/slots" }
    /// Where answers go when a request names no response topic.
    func response(_ command: String) -> String { "\(base)/responses/\(command)" }

    /// What one event becomes: topic, QoS, retain; nil for events not
    /// published.
    func route(_ event: BridgedEvent, valueQoS: QoS) -> (topic: String, qos: QoS, retain: Bool)? {
        switch event.type {
        case "adapter-state":
            guard let adapter = event.adapter else { return nil }
            return ("\(base)/adapters/\(adapter)/state", .atLeastOnce, true)
        case "adapter-updated":
            guard let adapter = event.adapter else { return nil }
            return ("\(base)/adapters/\(adapter)/details", .atLeastOnce, true)
        case "bluez-state":
            return ("\(base)/bluez", .atLeastOnce, true)
        case "device-discovered", "device-updated":
            guard let device = event.device else { return nil }
            return ("\(base)/devices/\(device)/advertisement", .atMostOnce, false)
        case "device-lost":
            guard let device = event.device else { return nil }
            return ("\(base)/devices/\(device)/lost", .atLeastOnce, false)
        case "device-connected", "services-resolved", "device-disconnected":
            guard let device = event.device else { return nil }
            return ("\(base)/devices/\(device)/connection", .atLeastOnce, true)
        case "characteristic-value":
            guard let device = event.device, let characteristic = event.characteristic else { return nil }
            return ("\(base)/devices/\(device)/characteristics/\(characteristic)", valueQoS, false)
        default:
            return nil
        }
    }
}
