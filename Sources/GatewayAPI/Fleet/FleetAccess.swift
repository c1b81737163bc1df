import GatewayCore

/// The fleet of gateways on one broker, as the `/v1/fleet/…` routes see it.
///
/// GatewayAPI knows nothing of MQTT: the MQTT bridge implements this, and
/// the launcher attaches it with `Gateway.attachFleet(_:)`. Without one,
/// the fleet routes answer 404 (docs/fleet.md).
public protocol FleetAccess: Sendable {
    /// Every gateway seen on the broker, this one included.
    func gateways() -> [FleetGateway]
    /// Every device some gateway of the fleet hears, has connected or keeps.
    func devices() -> [FleetDevice]
    /// Carries `command` to the gateway that suits its device best and
    /// returns that gateway's answer, or throws when none came by `timeout`
    /// or the command could not be sent.
    func send(_ command: FleetCommand, timeout: Duration) async throws(FleetError) -> FleetAnswer
    /// Starts handing every event the fleet's gateways publish to `sink`,
    /// in the order this gateway receives them. Called once.
    func followEvents(_ sink: @escaping @Sendable (FleetEvent) -> Void) async throws(FleetError)
    /// Publishes the fleet's wish to keep a device (retained on the broker),
    /// returning once the broker has it.
    func keepByFleet(_ keep: FleetKeep) async throws(FleetError)
    /// Clears the fleet's wish for `address`; false if the fleet did not
    /// keep it.
    func unkeepByFleet(_ address: String) async throws(FleetError) -> Bool
    /// Carries a leased `subscribe` (`command`, without its lease) to the
    /// gateway that suits the device and, once it has subscribed, hands
    /// that gateway's values for the characteristic to `receive` until the
    /// returned stream is closed or ends (`FleetStreamEvent.ended`).
    func openNotifications(
        _ command: FleetCommand, timeout: Duration, receive: @escaping @Sendable (FleetStreamEvent) -> Void
    ) async throws(FleetError) -> FleetNotificationOpening
}

extension FleetAccess {
    public func keepByFleet(_ keep: FleetKeep) async throws(FleetError) {
        throw .unavailable("this fleet does not keep devices")
    }

    public func unkeepByFleet(_ address: String) async throws(FleetError) -> Bool {
        throw .unavailable("this fleet does not keep devices")
    }

    public func openNotifications(
        _ command: FleetCommand, timeout: Duration, receive: @escaping @Sendable (FleetStreamEvent) -> Void
    ) async throws(FleetError) -> FleetNotificationOpening {
        throw .unavailable("this fleet does not carry notifications")
    }
}
