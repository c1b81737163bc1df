import BlueZ
import GatewayCore
import PersistedState

/// The state store's kept connections, as the core stores kept devices.
struct StoredKeptDevices: KeptDeviceStore {
    let store: Store

    func storeKept(_ key: AdapterDevice, options: KeptDeviceOptions, owner: String) async throws(StateStoreFailure) {
        do throws(StoreError) {
            _ = try await store.keep(
                KeptConnection(
                    adapter: key.adapter, address: key.address.description, options: options.stored, owner: owner))
        } catch {
            throw StateStoreFailure(error)
        }
    }

    func removeKept(_ key: AdapterDevice) async throws(StateStoreFailure) -> Bool {
        do throws(StoreError) {
            return try await store.removeKeptConnection(adapter: key.adapter, address: key.address.description)
        } catch {
            throw StateStoreFailure(error)
        }
    }

    func keptDevices() async throws(StateStoreFailure) -> [KeptConnection] {
        do throws(StoreError) {
            return try await store.keptConnections()
        } catch {
            throw StateStoreFailure(error)
        }
    }
}

extension StateStoreFailure {
    public init(_ error: StoreError) {
        self.init(message: error.message, diskFull: error.code == .diskFull)
    }
}
