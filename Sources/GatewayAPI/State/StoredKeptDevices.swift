import BlueZ
import GatewayCore
import PersistedState

/// The state store's kept connections, as the core stores kept devices.
struct StoredKeptDevices: KeptDeviceStore {
    let store: Store

    func storeKept(_ key: AdapterDevice, options: KeptDeviceOptions, owner: String) async throws(StateStoreFailure) {
        let kept = KeptConnection(
            adapter: key.adapter, address: key.address.description, options: options.stored, owner: owner)
        _ = try await StateStoreFailure.converting { () async throws(StoreError) in try await store.keep(kept) }
    }

    func removeKept(_ key: AdapterDevice) async throws(StateStoreFailure) -> Bool {
        try await StateStoreFailure.converting { () async throws(StoreError) in
            try await store.removeKeptConnection(adapter: key.adapter, address: key.address.description)
        }
    }

    func keptDevices() async throws(StateStoreFailure) -> [KeptConnection] {
        try await StateStoreFailure.converting { () async throws(StoreError) in try await store.keptConnections() }
    }
}

extension StateStoreFailure {
    public init(_ error: StoreError) {
        self.init(message: error.message, diskFull: error.code == .diskFull)
    }

    /// What `body` returns; its `StoreError` as the core's failure.
    static func converting<Value>(_ body: () async throws(StoreError) -> Value) async throws(StateStoreFailure) -> Value {
        do {
            return try await body()
        } catch {
            throw StateStoreFailure(error)
        }
    }
}
