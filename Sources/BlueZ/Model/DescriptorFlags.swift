/// What a GATT descriptor allows, as BlueZ's `GattDescriptor1.Flags` lists
/// it (doc/org.bluez.GattDescriptor.rst).
///
/// Descriptors have no properties field on the air; these are BlueZ's
/// access permissions, so the bit values are this module's own.
public struct DescriptorFlags: BlueZFlagSet, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let read = Self(rawValue: 1 << 0)
    public static let write = Self(rawValue: 1 << 1)
    public static let encryptRead = Self(rawValue: 1 << 2)
    public static let encryptWrite = Self(rawValue: 1 << 3)
    public static let encryptAuthenticatedRead = Self(rawValue: 1 << 4)
    public static let encryptAuthenticatedWrite = Self(rawValue: 1 << 5)
    /// Server only, like `secureWrite`.
    public static let secureRead = Self(rawValue: 1 << 6)
    public static let secureWrite = Self(rawValue: 1 << 7)
    public static let authorize = Self(rawValue: 1 << 8)

    public static let bluezNames: [(option: Self, name: String)] = [
        (.read, "read"),
        (.write, "write"),
        (.encryptRead, "encrypt-read"),
        (.encryptWrite, "encrypt-write"),
        (.encryptAuthenticatedRead, "encrypt-authenticated-read"),
        (.encryptAuthenticatedWrite, "encrypt-authenticated-write"),
        (.secureRead, "secure-read"),
        (.secureWrite, "secure-write"),
        (.authorize, "authorize"),
    ]
}
