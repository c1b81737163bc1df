extension Scenario {
    /// A GATT service of a device.
    public struct Service: Sendable {
        public var uuid: GATTUUID
        public var primary: Bool
        public var characteristics: [Characteristic]
        /// The services it includes (Include declarations), named by UUID:
        /// the first service of the device with each UUID.
        public var includes: [GATTUUID] = []

        public init(uuid: GATTUUID, primary: Bool = true, characteristics: [Characteristic] = []) {
            self.uuid = uuid
            self.primary = primary
            self.characteristics = characteristics
        }
    }

    /// A characteristic: its declared properties, its value and how the
    /// peripheral behaves when it is read, written or subscribed to.
    public struct Characteristic: Sendable {
        public var uuid: GATTUUID
        /// bluetoothd's flag names: `read`, `write`, `write-without-response`,
        /// `notify`, `indicate`, `broadcast`, `authenticated-signed-writes`,
        /// `extended-properties`, `reliable-write`, `writable-auxiliaries`.
        public var flags: [String]
        /// The value before the behaviour changes it.
        public var value: [UInt8]
        public var behaviour: Behaviour
        /// Reads and writes need an encrypted link (a paired device): the
        /// peripheral answers Insufficient Encryption otherwise.
        public var encrypted: Bool
        /// Descriptors other than the Client Characteristic Configuration,
        /// which is added for `notify`/`indicate` characteristics.
        public var descriptors: [Descriptor]

        public init(
            uuid: GATTUUID, flags: [String] = ["read"], value: [UInt8] = [], behaviour: Behaviour = .constant,
            encrypted: Bool = false, descriptors: [Descriptor] = []
        ) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
            self.behaviour = behaviour
            self.encrypted = encrypted
            self.descriptors = descriptors
        }
    }

    /// A characteristic descriptor with a fixed value (writes are stored).
    public struct Descriptor: Sendable {
        public var uuid: GATTUUID
        public var flags: [String]
        public var value: [UInt8]

        public init(uuid: GATTUUID, flags: [String] = ["read"], value: [UInt8] = []) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
        }
    }

    /// How a characteristic's value evolves and how the peripheral answers.
    public enum Behaviour: Sendable {
        /// Reads return the value; writes are acknowledged and dropped.
        case constant
        /// A little-endian unsigned counter of `size` bytes that adds `step`
        /// at every tick of `rate` per second (notifying each value), or at
        /// every read when `rate` is 0.
        case counter(start: UInt64, step: UInt64, size: Int, rate: Double)
        /// A Heart Rate Measurement (0x2A37 format: flags 0x06, 8-bit bpm)
        /// around `bpm` ± `variation`, `rate` per second.
        case heartRate(bpm: Int, variation: Int, rate: Double)
        /// A Battery Level that loses `drain` percent every `every` seconds
        /// (unscaled) down to `minimum`, notifying each change.
        case battery(level: Int, drain: Int, every: Double, minimum: Int)
        /// A Temperature Measurement (0x2A1C: flags, IEEE-11073 FLOAT in °C)
        /// around `celsius` ± `variation`, `rate` per second.
        case thermometer(celsius: Double, variation: Double, rate: Double)
        /// Writes are stored and read back (and notified when notifying).
        case echo
        /// Writes of one of `accept` succeed; any other value is answered
        /// with ATT error `error` (0x80: an application error).
        case controlPoint(accept: [[UInt8]], error: UInt8)
        /// Cycles through `values`, one every 1/`rate` seconds.
        case sequence(values: [[UInt8]], rate: Double)
        /// Every read and write is answered with ATT error `error`.
        case failing(error: UInt8)
    }
}
