import BlueZ
import GatewayCore

/// The fleet's keeping, as the core reaches it: through the fleet the
/// launcher attached (`Gateway.attachFleet`).
struct FleetAccessKeeping: FleetKeeping {
    let fleet: any FleetAccess

    func keep(_ wish: FleetKeep) async throws(GatewayCommandError) {
        do {
            try await fleet.keepByFleet(wish)
        } catch {
            throw Self.failure(error)
        }
    }

    func unkeep(_ address: BluetoothAddress) async throws(GatewayCommandError) -> Bool {
        do {
            return try await fleet.unkeepByFleet(address.description)
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: FleetError) -> GatewayCommandError {
        switch error {
        case .timeout: .timeout("the broker did not confirm the fleet's keep in time")
        case .unavailable(let why): .unavailable("the fleet cannot be reached: \(why)")
        }
    }
}
