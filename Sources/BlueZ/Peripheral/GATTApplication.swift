/// A GATT application the gateway serves as a peripheral: services with
/// their characteristics and descriptors, as `GattManager1.RegisterApplication`
/// takes them (doc/org.bluez.GattManager.rst).
public struct GATTApplication: Sendable, Hashable {
    public var services: [Service]
    /// The client's own name for the application (opaque to BlueZ).
    public var label: String?

    public init(services: [Service], label: String? = nil) {
        self.services = services
        self.label = label
    }

    /// A local service (`org.bluez.GattService1`).
    public struct Service: Sendable, Hashable {
        public var uuid: BluetoothUUID
        public var primary: Bool
        public var characteristics: [Characteristic]

        public init(uuid: BluetoothUUID, primary: Bool = true, characteristics: [Characteristic] = []) {
            self.uuid = uuid
            self.primary = primary
            self.characteristics = characteristics
        }
    }

    /// A local characteristic (`org.bluez.GattCharacteristic1`): its
    /// bluetoothd flags (`read`, `write`, `notify`, `encrypt-read`, ...), its
    /// initial value, and whether centrals' requests are answered by a
    /// client of the gateway (`delegated`) rather than from the stored value.
    public struct Characteristic: Sendable, Hashable {
        public var uuid: BluetoothUUID
        public var flags: [String]
        public var value: [UInt8]
        public var descriptors: [Descriptor]
        public var delegated: Bool

        public init(
            uuid: BluetoothUUID, flags: [String], value: [UInt8] = [], descriptors: [Descriptor] = [],
            delegated: Bool = false
        ) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
            self.descriptors = descriptors
            self.delegated = delegated
        }

        public var notifies: Bool { flags.contains { $0.hasSuffix("notify") } }
        public var indicates: Bool { flags.contains { $0.hasSuffix("indicate") } }
    }

    /// A local descriptor (`org.bluez.GattDescriptor1`), answered from its
    /// stored value.
    public struct Descriptor: Sendable, Hashable {
        public var uuid: BluetoothUUID
        public var flags: [String]
        public var value: [UInt8]

        public init(uuid: BluetoothUUID, flags: [String], value: [UInt8] = []) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
        }
    }

    /// The characteristic flags bluetoothd accepts (`parse_chrc_flags` in
    /// src/gatt-database.c); any other makes it refuse the application.
    public static let characteristicFlags: Set<String> = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-authenticated-read", "encrypt-authenticated-write", "secure-read",
        "secure-write", "authorize", "encrypt-notify", "encrypt-authenticated-notify", "secure-notify",
        "encrypt-indicate", "encrypt-authenticated-indicate", "secure-indicate",
    ]

    /// The descriptor flags bluetoothd accepts (`parse_desc_flags`).
    public static let descriptorFlags: Set<String> = [
        "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "secure-read", "secure-write", "authorize",
    ]

    /// Checks what bluetoothd would refuse, with a message naming the part:
    /// no services, unknown flags, a characteristic without flags, a
    /// Client Characteristic Configuration descriptor (bluetoothd adds it).
    public func validate() throws(BlueZError) {
        guard !services.isEmpty else { throw BlueZError(.invalidArguments, "an application needs a service") }
        let cccd = BluetoothUUID(uuid16: 0x2902)
        for (s, service) in services.enumerated() {
            for (c, characteristic) in service.characteristics.enumerated() {
                let name = "services[\(s)].characteristics[\(c)]"
                guard !characteristic.flags.isEmpty else {
                    throw BlueZError(.invalidArguments, "\(name).flags: at least one flag is required")
                }
                for flag in characteristic.flags where !Self.characteristicFlags.contains(flag) {
                    throw BlueZError(
                        .invalidArguments,
                        "\(name).flags: '\(flag)' is not a characteristic flag (\(Self.characteristicFlags.sorted().joined(separator: ", ")))")
                }
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    let name = "\(name).descriptors[\(d)]"
                    guard descriptor.uuid != cccd else {
                        throw BlueZError(
                            .invalidArguments, "\(name): bluetoothd adds the 2902 descriptor of notifying characteristics itself")
                    }
                    guard !descriptor.flags.isEmpty else {
                        throw BlueZError(.invalidArguments, "\(name).flags: at least one flag is required")
                    }
                    for flag in descriptor.flags where !Self.descriptorFlags.contains(flag) {
                        throw BlueZError(
                            .invalidArguments,
                            "\(name).flags: '\(flag)' is not a descriptor flag (\(Self.descriptorFlags.sorted().joined(separator: ", ")))")
                    }
                }
            }
        }
    }
}
