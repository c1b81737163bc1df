/// Change a known device's settings in bluetoothd: whether it is trusted
/// (its connections and pairings need no agent's confirmation) and whether
/// it is blocked (every connection from it refused). A setting left nil
/// stays as it is; the result is the device as it now is.
public struct ChangeDeviceSettingsCommand: Sendable, Hashable {
    public let device: DeviceTarget
    public let trusted: Bool?
    public let blocked: Bool?
    /// How long bluetoothd may take (nil: the central's default).
    public let timeout: Duration?

    public init(device: DeviceTarget, trusted: Bool? = nil, blocked: Bool? = nil, timeout: Duration? = nil) {
        self.device = device
        self.trusted = trusted
        self.blocked = blocked
        self.timeout = timeout
    }
}
