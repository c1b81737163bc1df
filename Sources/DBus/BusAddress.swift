/// Which bus a connection goes to.
public enum BusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket).
    case system
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// A bus at a D-Bus address such as `unix:path=/run/dbus/system_bus_socket`
    /// or `tcp:host=127.0.0.1,port=12345`.
    case address(String)

    public var description: String {
        switch self {
        case .system: "system bus"
        case .session: "session bus"
        case .address(let address): address
        }
    }
}
