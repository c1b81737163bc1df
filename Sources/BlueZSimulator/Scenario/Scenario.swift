/// What the simulator serves: adapters, and the peripherals around them with
/// their advertisements, GATT databases and behaviours.
///
/// Scenarios are written in YAML (or JSON, which YAML reads too); see
/// `docs/scenarios.md` for the format, `Scenario.load(path:)` to read one and
/// `Scenario.default` for the built-in demo.
public struct Scenario: Sendable {
    /// Scales every latency the simulator adds (connect, service
    /// resolution, pairing, disconnect, the removal of vanished devices):
    /// 1 is realistic, 0.01 makes tests fast. Rates (advertising intervals,
    /// notification rates) are not scaled.
    public var timing: Double
    /// Whether `PropertiesChanged(Connected=true)` follows a connection;
    /// nil leaves it to `SimulatorOptions` (never, as bluetoothd 5.66 most
    /// often does).
    public var connectedSignal: SimulatorOptions.ConnectedSignal?
    /// Whether bluetoothd runs with -E (experimental interfaces: the
    /// advertisement monitor manager, AdvertisingFlags and
    /// AdvertisingData); nil leaves it to `SimulatorOptions.experimental`.
    public var experimental: Bool?
    public var adapters: [Adapter]
    public var devices: [Device]

    public init(timing: Double = 1, adapters: [Adapter] = [Adapter()], devices: [Device] = []) {
        self.timing = timing
        self.adapters = adapters
        self.devices = devices
    }

    /// A local controller, served at `/org/bluez/<id>`.
    public struct Adapter: Sendable {
        /// `hci0`, `hci1`, ...
        public var id: String
        public var address: DeviceAddress
        public var name: String
        public var alias: String?
        public var powered: Bool
        public var discoverable: Bool
        public var pairable: Bool

        public init(
            id: String = "hci0", address: DeviceAddress = Adapter.defaultAddress, name: String = "blegateway",
            alias: String? = nil, powered: Bool = true, discoverable: Bool = false, pairable: Bool = true
        ) {
            self.id = id
            self.address = address
            self.name = name
            self.alias = alias
            self.powered = powered
            self.discoverable = discoverable
            self.pairable = pairable
        }

        // An address in a locally administered range, fixed so that tests
        // and demos see the same one every run.
        public static let defaultAddress = DeviceAddress(bytes: [0x00, 0x1A, 0x7D, 0xDA, 0x71, 0x13]).unsafelyUnwrapped
    }
}
