import BlueZ

/// A characteristic of a GATT application the gateway publishes: the
/// application's id and the characteristic's UUID, narrowed to a service
/// when it is in more than one.
public struct LocalCharacteristic: Sendable, Hashable {
    public let application: String
    public let uuid: BluetoothUUID
    public let service: BluetoothUUID?

    public init(application: String, uuid: BluetoothUUID, service: BluetoothUUID? = nil) {
        self.application = application
        self.uuid = uuid
        self.service = service
    }
}
