import BlueZ

/// The fleet's wishes to keep devices (docs/fleet.md, "Kept by the
/// fleet"), published where every gateway of the fleet sees them. The MQTT
/// bridge gives it (through GatewayAPI's `FleetAccess`); a gateway in no
/// fleet has none.
public protocol FleetKeeping: Sendable {
    /// Publishes the wish, returning once it is held where the fleet reads
    /// it; `.timeout` or `.unavailable` when it could not be.
    func keep(_ wish: FleetKeep) async throws(GatewayCommandError)
    /// Clears the fleet's wish for `address`; false if the fleet did not
    /// keep it.
    func unkeep(_ address: BluetoothAddress) async throws(GatewayCommandError) -> Bool
}
