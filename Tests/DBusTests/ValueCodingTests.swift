import CDBus
import Testing

@testable import DBus

/// Values marshalled into a real libdbus message and read back, with no bus.
@Suite struct ValueCodingTests {
    func roundTrip(_ body: [Value]) throws -> [Value] {
        var message = Message.methodCall(destination: "org.example.Test", path: "/x", interface: "org.example.I", member: "M", body: body)
        message.noReplyExpected = true
        let cMessage = try MessageCoder.encode(message)
        defer { dbus_message_unref(cMessage) }
        let decoded = MessageCoder.decode(cMessage)
        #expect(decoded.signature == message.signature)
        #expect(decoded.noReplyExpected)
        #expect(decoded.member == "M")
        return decoded.body
    }

    static let basics: [Value] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(.min), .uint16(.max), .int32(.min),
        .uint32(.max), .int64(.min), .uint64(.max), .double(-1.5), .double(.infinity), .string(""), .string("héllo ✓"),
        .objectPath("/org/bluez/hci0"), .signature("a{sv}"), .signature(""),
    ]

    @Test(arguments: basics)
    func basicValuesRoundTrip(_ value: Value) throws {
        #expect(try roundTrip([value]) == [value])
    }

    @Test func containersRoundTrip() throws {
        let values: [Value] = [
            .bytes([]),
            .bytes([0, 1, 2, 255]),
            .array(.string, []),
            .array(.int32, [.int32(1), .int32(-2)]),
            .array(.array(.byte), [.bytes([1]), .bytes([])]),
            .dictionary(key: .string, value: .variant, []),
            .vardict(["Powered": .boolean(true), "Name": .string("hci0"), "UUIDs": .strings(["180d"])]),
            .dictionary(key: .uint16, value: .variant, [DictionaryEntry(.uint16(0x004c), .variant(.bytes([2, 21])))]),
            .dictionary(
                key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                [
                    DictionaryEntry(
                        .objectPath("/org/bluez/hci0"),
                        .dictionary(
                            key: .string, value: .dictionary(key: .string, value: .variant),
                            [DictionaryEntry(.string("org.bluez.Adapter1"), .vardict(["Powered": .boolean(false)]))]))
                ]),
            .structure([.byte(1), .string("two"), .array(.uint16, [.uint16(3)])]),
            .variant(.variant(.variant(.int64(7)))),
            .variant(.structure([.objectPath("/"), .vardict([:])])),
        ]
        #expect(try roundTrip(values) == values)
    }

    @Test func largeByteArrayRoundTrips() throws {
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try roundTrip([.bytes(bytes)]) == [.bytes(bytes)])
    }

    @Test func unixFDsAreDuplicatedIntoTheMessage() throws {
        var fds: [Int32] = [0, 0]
        #expect(cdbus_pipe_cloexec(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let decoded = try roundTrip([.unixFD(UnixFD(fds[0]))])
        let received = try #require(decoded.first?.unixFD)
        #expect(received.rawValue != fds[0])
        #expect(received.rawValue >= 0)
        close(received.rawValue)
    }

    @Test func emptyBodyRoundTrips() throws {
        #expect(try roundTrip([]) == [])
    }

    @Test(arguments: [
        Value.string("a\u{0}b"),
        .array(.string, [.int32(1)]),
        .dictionary(key: .string, value: .variant, [DictionaryEntry(.string("k"), .string("not a variant"))]),
        .dictionary(key: .variant, value: .string, []),
        .structure([]),
        (0..<70).reduce(Value.byte(0)) { inner, _ in .variant(inner) },
    ])
    func malformedValuesAreRejected(_ value: Value) {
        #expect(throws: DBusError.self) { _ = try roundTrip([value]) }
    }

    @Test func accessorsLookThroughVariants() {
        let properties = Value.vardict(["Connected": .boolean(true), "RSSI": .int16(-60), "UUIDs": .strings(["a", "b"])])
        let dictionary = properties.vardict
        #expect(dictionary?["Connected"]?.bool == true)
        #expect(dictionary?["RSSI"]?.int16 == -60)
        #expect(dictionary?["UUIDs"]?.strings == ["a", "b"])
        #expect(Value.variant(.string("x")).string == "x")
        #expect(Value.string("x").bool == nil)
        #expect(Value.int32(1).vardict == nil)
    }
}

@Suite struct MatchRuleTests {
    @Test func textQuotesValues() {
        let rule = MatchRule(
            sender: "org.bluez", interface: .properties, member: "PropertiesChanged", pathNamespace: "/org/bluez",
            arguments: [0: "it's"])
        #expect(
            rule.description
                == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'"
        )
    }

    @Test func localMatching() {
        let rule = MatchRule(interface: .properties, pathNamespace: "/org/bluez", arguments: [0: "org.bluez.Device1"])
        var signal = Message.signal(
            path: "/org/bluez/hci0/dev_1", interface: .properties, member: "PropertiesChanged",
            body: [.string("org.bluez.Device1"), .vardict([:]), .strings([])])
        #expect(rule.matchesIgnoringWellKnownSender(signal))
        signal.path = "/org/bluezz"
        #expect(!rule.matchesIgnoringWellKnownSender(signal))
        signal.path = "/org/bluez"
        signal.body[0] = .string("org.bluez.Adapter1")
        #expect(!rule.matchesIgnoringWellKnownSender(signal))
    }
}
