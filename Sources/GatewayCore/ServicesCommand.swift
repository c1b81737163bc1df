import BlueZ

/// List a connected device's GATT database: its services, by handle, with
/// their characteristics and descriptors; only the services with the given
/// UUIDs when `services` is not empty.
public struct ServicesCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let services: [BluetoothUUID]

    public init(device: DeviceTarget, services: [BluetoothUUID] = []) {
        self.device = device
        self.services = services
    }

    /// Reads service UUIDs as a client gave them, each text one UUID or
    /// several separated by commas (`?service=180f,180a`); a mistake names
    /// `service`.
    public static func services(parsing texts: [String]) throws(GatewayCommandError) -> [BluetoothUUID] {
        var uuids: [BluetoothUUID] = []
        for text in texts {
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                uuids.append(try CharacteristicTarget.uuid(String(part), parameter: "service"))
            }
        }
        return uuids
    }
}
