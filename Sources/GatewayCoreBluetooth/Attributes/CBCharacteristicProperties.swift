import Foundation

/// What a characteristic allows, as Core Bluetooth names it.
public struct CBCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let broadcast = CBCharacteristicProperties(rawValue: 0x01)
    public static let read = CBCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CBCharacteristicProperties(rawValue: 0x04)
    public static let write = CBCharacteristicProperties(rawValue: 0x08)
    public static let notify = CBCharacteristicProperties(rawValue: 0x10)
    public static let indicate = CBCharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = CBCharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = CBCharacteristicProperties(rawValue: 0x80)
    public static let notifyEncryptionRequired = CBCharacteristicProperties(rawValue: 0x100)
    public static let indicateEncryptionRequired = CBCharacteristicProperties(rawValue: 0x200)

    /// BlueZ's flag for each property.
    static let bluezFlags: [(CBCharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"), (.write, "write"),
        (.notify, "notify"), (.indicate, "indicate"), (.authenticatedSignedWrites, "authenticated-signed-writes"),
        (.extendedProperties, "extended-properties"), (.notifyEncryptionRequired, "encrypt-notify"),
        (.indicateEncryptionRequired, "encrypt-indicate"),
    ]

    init(bluezFlags flags: [String]) {
        self = Self.bluezFlags.reduce(into: []) { properties, pair in
            if flags.contains(pair.1) { properties.insert(pair.0) }
        }
    }

    var bluezFlags: [String] { Self.bluezFlags.filter { contains($0.0) }.map(\.1) }
}

/// How a value is written.
public enum CBCharacteristicWriteType: Int, Sendable {
    /// A write request: the peripheral answers, and `didWriteValueFor` says how it went.
    case withResponse = 0
    /// A write command: no answer and no callback.
    case withoutResponse = 1
}

/// Who may read and write a published characteristic's value.
public struct CBAttributePermissions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let readable = CBAttributePermissions(rawValue: 0x01)
    public static let writeable = CBAttributePermissions(rawValue: 0x02)
    public static let readEncryptionRequired = CBAttributePermissions(rawValue: 0x04)
    public static let writeEncryptionRequired = CBAttributePermissions(rawValue: 0x08)
}
