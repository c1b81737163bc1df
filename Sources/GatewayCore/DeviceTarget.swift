import BlueZ

/// The device a command acts on: a validated address, and the adapter
/// named for it (nil: the core's default, else the central's choice).
public struct DeviceTarget: Sendable, Hashable {
    public let address: BluetoothAddress
    public let adapter: String?

    public init(address: BluetoothAddress, adapter: String? = nil) {
        self.address = address
        self.adapter = adapter
    }

    /// Reads `address` (any spelling `BluetoothAddress(parsing:)` takes) and
    /// `adapter` (`hci0`, ...) as a client gave them; a mistake names
    /// `address` or `adapter`.
    public init(parsing address: String, adapter: String?) throws(GatewayCommandError) {
        self.init(
            address: try Self.address(address, parameter: "address"),
            adapter: try adapter.map { (name) throws(GatewayCommandError) in try Self.adapterName(name, parameter: "adapter") })
    }

    /// A Bluetooth address given as text, a mistake naming `parameter`.
    public static func address(_ text: String, parameter: String) throws(GatewayCommandError) -> BluetoothAddress {
        do {
            return try BluetoothAddress(parsing: text)
        } catch {
            throw .invalidParameter(name: parameter, reason: error.message)
        }
    }

    /// An adapter name (`hci0`), a mistake naming `parameter`.
    public static func adapterName(_ name: String, parameter: String) throws(GatewayCommandError) -> String {
        do {
            return try AdapterName.validate(name)
        } catch {
            throw .invalidParameter(name: parameter, reason: error.message)
        }
    }
}
