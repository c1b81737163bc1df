import DBus

/// The simulated remote central: a phone near the gateway that uses the
/// GATT applications clients registered on an adapter, as bluetoothd
/// forwards a real central's requests. An application's refusal is a
/// `CentralATTError` with the ATT code the central would receive.
extension SimulatedBlueZ {
    /// Reads a registered characteristic (`ReadValue` on the application).
    public func centralRead(adapter: String, characteristic: GATTUUID) async throws -> [UInt8] {
        try await core.centralRead(adapter: adapter, characteristic)
    }

    /// Writes a registered characteristic with a write request.
    public func centralWrite(_ value: [UInt8], adapter: String, characteristic: GATTUUID) async throws {
        try await core.centralWrite(adapter: adapter, characteristic, value)
    }

    /// Subscribes to notifications or indications of a registered characteristic.
    public func centralSubscribe(adapter: String, characteristic: GATTUUID) async throws {
        try await core.centralSubscribe(adapter: adapter, characteristic)
    }

    public func centralUnsubscribe(adapter: String, characteristic: GATTUUID) async throws {
        try await core.centralUnsubscribe(adapter: adapter, characteristic)
    }

    /// The central disconnects from `adapter`: its subscriptions end
    /// (`StopNotify` where it was the last subscriber) and its device
    /// object's `Connected` turns false. Its next request connects again.
    public func centralDisconnect(adapter: String) async throws {
        try await core.centralDisconnect(adapter: adapter)
    }

    /// The values the central received by notification or indication, oldest first.
    public func centralReceived(adapter: String, characteristic: GATTUUID) async throws -> [[UInt8]] {
        try await core.centralReceivedValues(adapter: adapter, characteristic)
    }

    /// The object paths of the registered applications (owner's unique
    /// name, a space, the application's root path), sorted.
    public func registeredApplications() async -> [String] {
        await core.peripheral.applications.keys.map { "\($0.owner.rawValue) \($0.path.rawValue)" }.sorted()
    }

    /// The registered advertisements, with their properties as bluetoothd read them.
    public func registeredAdvertisements() async -> [(path: String, properties: [String: Value])] {
        await core.peripheral.advertisements.map { ("\($0.key.owner.rawValue) \($0.key.path.rawValue)", $0.value.properties) }
            .sorted { $0.0 < $1.0 }
    }
}
