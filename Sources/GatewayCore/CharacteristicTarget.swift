import BlueZ

/// The characteristic a command acts on: its device and how it is named
/// (a UUID, narrowed to a service or not, or `handle:N`).
public struct CharacteristicTarget: Sendable, Hashable {
    public let device: DeviceTarget
    public let selector: AttributeSelector

    public init(device: DeviceTarget, selector: AttributeSelector) {
        self.device = device
        self.selector = selector
    }

    /// Reads `characteristic` (a UUID or `handle:N`) and `service` (a UUID
    /// or nil) as a client gave them; the service is read first, as the
    /// REST routes read their query before the path's characteristic.
    public init(device: DeviceTarget, parsing characteristic: String, service: String?) throws(GatewayCommandError) {
        let service = try service.map { (text) throws(GatewayCommandError) in try Self.uuid(text, parameter: "service") }
        self.init(device: device, selector: try Self.attribute(characteristic, parameter: "characteristic", service: service))
    }

    /// A characteristic or descriptor named by `text`: a UUID, or
    /// `handle:N` (decimal or 0x-hex); a mistake names `parameter`.
    public static func attribute(_ text: String, parameter: String, service: BluetoothUUID?) throws(GatewayCommandError)
        -> AttributeSelector
    {
        if text.lowercased().hasPrefix("handle:") {
            let number = text.dropFirst("handle:".count)
            let handle = number.lowercased().hasPrefix("0x") ? UInt16(number.dropFirst(2), radix: 16) : UInt16(number)
            guard let handle else {
                throw .invalidParameter(name: parameter, reason: "'\(text)' is not a handle (handle:17 or handle:0x0011)")
            }
            return .handle(handle)
        }
        return .uuid(try uuid(text, parameter: parameter), service: service)
    }

    /// A Bluetooth UUID in any form `BluetoothUUID(parsing:)` takes; a
    /// mistake names `parameter`.
    public static func uuid(_ text: String, parameter: String) throws(GatewayCommandError) -> BluetoothUUID {
        do {
            return try BluetoothUUID(parsing: text)
        } catch {
            throw .invalidParameter(name: parameter, reason: error.message)
        }
    }
}
