import Testing

@testable import BlueZ

@Suite struct FlagsTests {
    /// The values of GattCharacteristic1.Flags in doc/org.bluez.GattCharacteristic.rst.
    static let characteristicFlags = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-notify", "encrypt-indicate",
        "encrypt-authenticated-read", "encrypt-authenticated-write", "encrypt-authenticated-notify",
        "encrypt-authenticated-indicate", "secure-read", "secure-write", "secure-notify", "secure-indicate",
        "authorize",
    ]

    /// The values of GattDescriptor1.Flags in doc/org.bluez.GattDescriptor.rst.
    static let descriptorFlags = [
        "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "secure-read", "secure-write", "authorize",
    ]

    @Test func everyCharacteristicFlagRoundTripsAlone() {
        var all: CharacteristicProperties = []
        for flag in Self.characteristicFlags {
            let (parsed, unknown) = CharacteristicProperties.parse(bluezFlags: [flag])
            #expect(unknown.isEmpty)
            #expect(parsed.bluezFlags == [flag])
            #expect(all.isDisjoint(with: parsed), "\(flag) shares a bit")
            all.formUnion(parsed)
        }
        #expect(all.bluezFlags == Self.characteristicFlags)
        #expect(CharacteristicProperties.bluezNames.map(\.name) == Self.characteristicFlags)
    }

    @Test func everyDescriptorFlagRoundTripsAlone() {
        var all: DescriptorFlags = []
        for flag in Self.descriptorFlags {
            let (parsed, unknown) = DescriptorFlags.parse(bluezFlags: [flag])
            #expect(unknown.isEmpty)
            #expect(parsed.bluezFlags == [flag])
            #expect(all.isDisjoint(with: parsed), "\(flag) shares a bit")
            all.formUnion(parsed)
        }
        #expect(all.bluezFlags == Self.descriptorFlags)
    }

    @Test func formatsInDocumentationOrderAndKeepsUnknownFlags() {
        let (flags, unknown) = CharacteristicProperties.parse(
            bluezFlags: ["notify", "x-future", "read", "read", "Write", "write-without-response"]
        )
        #expect(flags == [.read, .notify, .writeWithoutResponse])
        #expect(flags.bluezFlags == ["read", "write-without-response", "notify"])
        #expect(unknown == ["x-future", "Write"])
    }

    @Test func lowBytesAreTheATTPropertyFields() {
        // A Heart Rate Measurement declares only notify (0x10).
        #expect(CharacteristicProperties(rawValue: 0x10) == .notify)
        #expect(CharacteristicProperties(rawValue: 0x0A) == [.read, .write])
        #expect(CharacteristicProperties.reliableWrite.rawValue == 0x0100)
    }
}
