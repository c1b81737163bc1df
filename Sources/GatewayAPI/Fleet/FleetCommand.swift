/// A command for whichever gateway of the fleet suits the device: one of
/// the MQTT bridge's commands (docs/mqtt.md) and its JSON payload.
public struct FleetCommand: Sendable, Hashable {
    /// `connect`, `disconnect`, `read`, `write`, `keep`, `keep-status` or `unkeep`.
    public var name: String
    /// A JSON object with at least `address`.
    public var payload: [UInt8]

    public init(name: String, payload: [UInt8]) {
        self.name = name
        self.payload = payload
    }
}
