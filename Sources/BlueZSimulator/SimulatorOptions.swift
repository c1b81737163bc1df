/// How the simulator departs from (or reproduces) details of the real
/// daemon. The defaults are bluetoothd 5.66 as Debian 12 ships it.
public struct SimulatorOptions: Sendable {
    /// Whether `PropertiesChanged(Connected=true)` is emitted after a
    /// connection. The real bluetoothd often does not emit it (a race seen
    /// in 7 of 9 runs in the VM rig, see docs/simulator.md, "Fidelity"):
    /// clients must rely on `Connect()` returning, a `Get` of `Connected`
    /// and `ServicesResolved`. The property's value is correct either way.
    /// The default is `.never`, what bluetoothd 5.66 does most often: a
    /// client that waits for the signal fails on the real daemon, and must
    /// fail on the simulator too.
    public enum ConnectedSignal: Sendable, Hashable {
        /// Always emitted (a well-behaved daemon).
        case always
        /// Never emitted (the race lost every time, as in most runs).
        case never
        /// Emitted with this probability, from the seeded generator.
        case sometimes(Double)

        /// `always`, `never` or a probability from 0 to 1, as scenarios and
        /// `bluez-sim --connected-signal` write it.
        public init?(_ text: String) {
            switch text {
            case "always": self = .always
            case "never": self = .never
            default:
                guard let probability = Double(text), (0...1).contains(probability) else { return nil }
                self = .sometimes(probability)
            }
        }
    }

    /// Whether a device is heard at the start of a discovery. In the VM rig
    /// btvirt sends one advertising report per scan start, and the kernel
    /// drops it when it arrives before discovery is marked active (in the
    /// rig's hci.btsnoop: the report and its scan response ahead of the Start
    /// Service Discovery completion, and no Device Found): the device is
    /// then heard only at the next scan cycle, about 10 s later, although
    /// bluetoothd may still list it from an earlier scan.
    public enum ScanStartReport: Sendable, Hashable {
        /// Heard at a random moment of its first advertising interval, as
        /// a real radio hears an advertiser.
        case always
        /// The report at the start is lost: each device is first heard one
        /// whole advertising interval after discovery starts.
        case never
        /// Heard at the start with this probability, from the seeded
        /// generator.
        case sometimes(Double)
    }

    /// Whether `PropertiesChanged(Connected=true)` follows a connection
    /// (`.never` by default); a scenario's `connectedSignal` overrides it.
    public var connectedSignal: ConnectedSignal
    /// Whether devices are heard at the start of a discovery (`.always`
    /// by default).
    public var scanStartReport: ScanStartReport
    /// How long a scan restart for a changed discovery filter takes, during
    /// which the last client's StopDiscovery is refused as bluetoothd 5.66
    /// refuses it (about 40 ms in the VM rig; wider by default so that
    /// tests can hit it; not scaled by `timing`).
    public var scanRestartWindow: Duration
    /// bluetoothd's `-E`: also serve the experimental Device1 properties
    /// (`AdvertisingFlags`, `AdvertisingData`), absent from a stock 5.66.
    public var experimental: Bool
    /// Seconds a device that is neither connected, paired nor trusted stays
    /// after it was last seen (main.conf `TemporaryTimeout`, 30 by
    /// default); scaled by the scenario's `timing`.
    public var temporaryTimeout: Double
    /// The seed of the random generator behind RSSI jitter, heart-rate
    /// variation, `ConnectedSignal.sometimes` and `ScanStartReport.sometimes`.
    public var seed: UInt64

    public init(
        connectedSignal: ConnectedSignal = .never, scanStartReport: ScanStartReport = .always,
        scanRestartWindow: Duration = .milliseconds(200), experimental: Bool = false, temporaryTimeout: Double = 30,
        seed: UInt64 = 0x5EED
    ) {
        self.scanRestartWindow = scanRestartWindow
        self.connectedSignal = connectedSignal
        self.scanStartReport = scanStartReport
        self.experimental = experimental
        self.temporaryTimeout = temporaryTimeout
        self.seed = seed
    }
}
