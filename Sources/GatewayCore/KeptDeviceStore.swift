import BlueZ
import PersistedState

/// Where the devices kept on this gateway are stored, so that a restart
/// keeps them again (GatewayAPI gives the state store; a gateway without
/// one stores nothing). Each change is committed before it returns.
public protocol KeptDeviceStore: Sendable {
    /// Stores the device (its options replaced if it was stored), counted
    /// against `owner`.
    func storeKept(_ key: AdapterDevice, options: KeptDeviceOptions, owner: String) async throws(StateStoreFailure)
    /// Removes the device; false if it was not stored.
    func removeKept(_ key: AdapterDevice) async throws(StateStoreFailure) -> Bool
    /// Every stored kept device, as stored (read at start-up).
    func keptDevices() async throws(StateStoreFailure) -> [KeptConnection]
}
