/// The link of a device held for the fleet, as its holder judges it.
public struct FleetHoldLink: Sendable, Hashable {
    /// Up as soon as bluetoothd says the device is connected: its services
    /// may still be resolving, which takes a real device seconds (the
    /// keeper says `connected` only after).
    public let isUp: Bool
    /// The adapter it is kept through is powered: one that is off cannot
    /// reach the device however long it tries.
    public let adapterOn: Bool
}
