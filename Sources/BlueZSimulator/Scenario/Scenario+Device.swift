extension Scenario {
    /// A simulated peripheral.
    public struct Device: Sendable {
        public enum AddressType: String, Sendable {
            case `public`, random
        }

        public var address: DeviceAddress
        public var addressType: AddressType
        /// The adapter (`hci0`) that sees it; nil means the first one.
        public var adapter: String?
        /// The advertised local name; nil for an unnamed device.
        public var name: String?
        public var appearance: UInt16?
        /// bluetoothd's `Icon`; derived from `appearance` when nil.
        public var icon: String?
        /// The signal strength at the adapter, dBm.
        public var rssi: Int16
        /// Each advertisement's RSSI varies by up to ± this many dBm.
        public var rssiJitter: Int16
        /// The adapters that hear the device, each with its own signal
        /// strength (dBm), when more than one does: bluetoothd then has one
        /// Device1 object per adapter for the same peer
        /// (`/org/bluez/hci0/dev_…` and `/org/bluez/hci1/dev_…`). Empty:
        /// only `adapter` hears it, at `rssi`.
        public var heardBy: [String: Int16] = [:]
        public var txPower: Int16?
        public var advertising: Advertising
        /// Bonded before the simulator starts (bluetoothd loads it from
        /// storage: present on the bus without discovery).
        public var paired: Bool
        public var trusted: Bool
        public var blocked: Bool
        public var connection: Connection
        public var pairing: Pairing
        /// Going out of range and coming back, if the device does.
        public var range: Range?
        public var services: [Service]

        public init(
            address: DeviceAddress, addressType: AddressType = .random, adapter: String? = nil, name: String? = nil,
            appearance: UInt16? = nil, icon: String? = nil, rssi: Int16 = -60, rssiJitter: Int16 = 0,
            txPower: Int16? = nil, advertising: Advertising = Advertising(), paired: Bool = false,
            trusted: Bool = false, blocked: Bool = false, connection: Connection = Connection(),
            pairing: Pairing = Pairing(), range: Range? = nil, services: [Service] = []
        ) {
            self.address = address
            self.addressType = addressType
            self.adapter = adapter
            self.name = name
            self.appearance = appearance
            self.icon = icon
            self.rssi = rssi
            self.rssiJitter = rssiJitter
            self.txPower = txPower
            self.advertising = advertising
            self.paired = paired
            self.trusted = trusted
            self.blocked = blocked
            self.connection = connection
            self.pairing = pairing
            self.range = range
            self.services = services
        }

        /// The device as each adapter that hears it sees it: one copy per
        /// entry of `heardBy` (by adapter id), with that adapter and RSSI;
        /// or the device itself when `heardBy` is empty.
        public var placements: [Device] {
            guard !heardBy.isEmpty else { return [self] }
            return heardBy.sorted { $0.key < $1.key }.map { adapter, rssi in
                var copy = self
                copy.adapter = adapter
                copy.rssi = rssi
                copy.heardBy = [:]
                return copy
            }
        }
    }

    /// What a device puts in its advertisements.
    public struct Advertising: Sendable {
        /// Seconds between two advertising reports (not scaled by `timing`).
        public var interval: Double
        /// Service UUIDs advertised (they become the device's `UUIDs`).
        public var uuids: [GATTUUID]
        /// Company identifier → data.
        public var manufacturerData: [UInt16: [UInt8]]
        /// Service UUID → data.
        public var serviceData: [GATTUUID: [UInt8]]
        /// The AD flags byte(s); `06` (LE General Discoverable, BR/EDR not
        /// supported) by default.
        public var flags: [UInt8]
        public var connectable: Bool
        /// When set, the last byte of each manufacturer data entry counts up
        /// with every advertisement (a beacon's sequence number), so
        /// `ManufacturerData` changes while discovering.
        public var counter: Bool
        /// Other AD structures by AD type (a URI 0x24, Transport Discovery
        /// Data 0x26, ...): what bluetoothd keeps raw in `AdvertisingData`,
        /// served with `SimulatorOptions.experimental` as bluetoothd -E
        /// serves it.
        public var data: [UInt8: [UInt8]] = [:]

        /// The AD types bluetoothd 5.66 parses into properties of their own
        /// (src/eir.c `eir_parse`): never in `AdvertisingData`.
        public static let parsedTypes: Set<UInt8> = [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0x16, 0x19, 0x20, 0x21,
            0xFF,
        ]

        public init(
            interval: Double = 1, uuids: [GATTUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
            serviceData: [GATTUUID: [UInt8]] = [:], flags: [UInt8] = [0x06], connectable: Bool = true,
            counter: Bool = false
        ) {
            self.interval = interval
            self.uuids = uuids
            self.manufacturerData = manufacturerData
            self.serviceData = serviceData
            self.flags = flags
            self.connectable = connectable
            self.counter = counter
        }
    }

    /// How connecting to the device goes.
    public struct Connection: Sendable {
        /// Seconds `Connect` takes before it returns (scaled by `timing`);
        /// the real daemon answered in 0.3 s in the VM rig.
        public var delay: Double
        /// Seconds from the connection to `ServicesResolved` (scaled); 2 s in
        /// the VM rig for a database of 6 services.
        public var resolveDelay: Double
        /// The first this many `Connect` calls fail.
        public var failures: Int
        /// The reason they fail with: bluetoothd's `le-connection-*` text.
        public var error: String
        /// The ATT MTU bluetoothd reports once the exchange is done (`MTU`
        /// of each characteristic): 517 between BlueZ peers, 23 for a
        /// peripheral that never exchanges it.
        public var mtu: UInt16

        public init(
            delay: Double = 0.3, resolveDelay: Double = 2.0, failures: Int = 0,
            error: String = "le-connection-abort-by-local", mtu: UInt16 = 517
        ) {
            self.delay = delay
            self.resolveDelay = resolveDelay
            self.failures = failures
            self.error = error
            self.mtu = mtu
        }
    }

    /// How pairing with the device goes.
    public struct Pairing: Sendable {
        /// Seconds `Pair` takes (scaled).
        public var delay: Double
        /// Whether the device accepts pairing; when false `Pair` fails with
        /// `AuthenticationFailed`, and characteristics that need encryption
        /// stay out of reach.
        public var accept: Bool
        /// The device's IO capability (`NoInputNoOutput`, `DisplayOnly`,
        /// `DisplayYesNo`, `KeyboardOnly`, `KeyboardDisplay`): with the
        /// agent's, it picks the method (LE Secure Connections).
        public var ioCapability: String
        /// The passkey the device displays (for the agent to enter, or to
        /// compare); nil: a random one each time.
        public var passkey: UInt32?
        /// Whether the device answers the exchange at all; when false,
        /// `Pair` fails with `AuthenticationTimeout` after `timeout`.
        public var responds: Bool
        /// Seconds an unanswered exchange lasts (scaled; the SMP timeout).
        public var timeout: Double
        /// For passkey entry on the device: whether it types a wrong one.
        public var entersWrongPasskey: Bool

        public init(
            delay: Double = 1.0, accept: Bool = true, ioCapability: String = "NoInputNoOutput", passkey: UInt32? = nil,
            responds: Bool = true, timeout: Double = 30, entersWrongPasskey: Bool = false
        ) {
            self.delay = delay
            self.accept = accept
            self.ioCapability = ioCapability
            self.passkey = passkey
            self.responds = responds
            self.timeout = timeout
            self.entersWrongPasskey = entersWrongPasskey
        }
    }

    /// A device that leaves radio range and may come back.
    public struct Range: Sendable {
        /// Seconds after the simulator starts (or after it came back) until
        /// the device leaves (scaled).
        public var leaveAfter: Double
        /// Seconds out of range before it returns; nil: it never returns.
        public var returnAfter: Double?

        public init(leaveAfter: Double, returnAfter: Double? = nil) {
            self.leaveAfter = leaveAfter
            self.returnAfter = returnAfter
        }
    }
}
