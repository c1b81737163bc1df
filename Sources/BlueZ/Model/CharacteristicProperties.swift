/// What a GATT characteristic allows, as BlueZ's `GattCharacteristic1.Flags`
/// lists it (doc/org.bluez.GattCharacteristic.rst).
///
/// The low byte is the ATT Characteristic Properties field and the next the
/// Characteristic Extended Properties field (Core Specification, Vol 3,
/// Part G, 3.3.1.1 and 3.3.3.1), so values read off the air map directly;
/// the security options BlueZ adds for local servers sit above them.
public struct CharacteristicProperties: BlueZFlagSet, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 1 << 0)
    public static let read = Self(rawValue: 1 << 1)
    public static let writeWithoutResponse = Self(rawValue: 1 << 2)
    public static let write = Self(rawValue: 1 << 3)
    public static let notify = Self(rawValue: 1 << 4)
    public static let indicate = Self(rawValue: 1 << 5)
    public static let authenticatedSignedWrites = Self(rawValue: 1 << 6)
    public static let extendedProperties = Self(rawValue: 1 << 7)
    public static let reliableWrite = Self(rawValue: 1 << 8)
    public static let writableAuxiliaries = Self(rawValue: 1 << 9)
    public static let encryptRead = Self(rawValue: 1 << 16)
    public static let encryptWrite = Self(rawValue: 1 << 17)
    /// Server only, like all `*Notify`/`*Indicate` and `secure*` options.
    public static let encryptNotify = Self(rawValue: 1 << 18)
    public static let encryptIndicate = Self(rawValue: 1 << 19)
    public static let encryptAuthenticatedRead = Self(rawValue: 1 << 20)
    public static let encryptAuthenticatedWrite = Self(rawValue: 1 << 21)
    public static let encryptAuthenticatedNotify = Self(rawValue: 1 << 22)
    public static let encryptAuthenticatedIndicate = Self(rawValue: 1 << 23)
    public static let secureRead = Self(rawValue: 1 << 24)
    public static let secureWrite = Self(rawValue: 1 << 25)
    public static let secureNotify = Self(rawValue: 1 << 26)
    public static let secureIndicate = Self(rawValue: 1 << 27)
    public static let authorize = Self(rawValue: 1 << 28)

    public static let bluezNames: [(option: Self, name: String)] = [
        (.broadcast, "broadcast"),
        (.read, "read"),
        (.writeWithoutResponse, "write-without-response"),
        (.write, "write"),
        (.notify, "notify"),
        (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticated-signed-writes"),
        (.extendedProperties, "extended-properties"),
        (.reliableWrite, "reliable-write"),
        (.writableAuxiliaries, "writable-auxiliaries"),
        (.encryptRead, "encrypt-read"),
        (.encryptWrite, "encrypt-write"),
        (.encryptNotify, "encrypt-notify"),
        (.encryptIndicate, "encrypt-indicate"),
        (.encryptAuthenticatedRead, "encrypt-authenticated-read"),
        (.encryptAuthenticatedWrite, "encrypt-authenticated-write"),
        (.encryptAuthenticatedNotify, "encrypt-authenticated-notify"),
        (.encryptAuthenticatedIndicate, "encrypt-authenticated-indicate"),
        (.secureRead, "secure-read"),
        (.secureWrite, "secure-write"),
        (.secureNotify, "secure-notify"),
        (.secureIndicate, "secure-indicate"),
        (.authorize, "authorize"),
    ]
}
