import Testing

@testable import DBus

@Suite struct NameTests {
    @Test(arguments: ["/", "/org/bluez", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "/a_1/B2"])
    func validObjectPaths(_ text: String) {
        #expect(ObjectPath(rawValue: text) != nil)
    }

    @Test(arguments: ["", "org", "/org/", "//", "/org//bluez", "/org/blu-ez", "/org/bluez.x", "/ü"])
    func invalidObjectPaths(_ text: String) {
        #expect(ObjectPath(rawValue: text) == nil)
        #expect(throws: DBusError.self) { try ObjectPath(text) }
    }

    @Test(arguments: ["org.bluez", ":1.42", "org.freedesktop.DBus", "a-b.c_d", ":1.1-x"])
    func validBusNames(_ text: String) {
        #expect(BusName(rawValue: text) != nil)
    }

    @Test(arguments: ["", "org", ".org.bluez", "org..bluez", "org.bluez.", "1org.bluez", "org.1bluez", ":", "org.blu ez"])
    func invalidBusNames(_ text: String) {
        #expect(BusName(rawValue: text) == nil)
    }

    @Test func interfaceAndErrorNamesRejectHyphens() {
        #expect(InterfaceName(rawValue: "org.bluez.Device1") != nil)
        #expect(InterfaceName(rawValue: "org.blu-ez.Device1") == nil)
        #expect(ErrorName(rawValue: "org.bluez.Error.InProgress") != nil)
        #expect(ErrorName(rawValue: "NotPermitted") == nil)
    }

    @Test(arguments: ["ReadValue", "_x", "a1"])
    func validMembers(_ text: String) {
        #expect(MemberName(rawValue: text) != nil)
    }

    @Test(arguments: ["", "1a", "Read.Value", "Read-Value", String(repeating: "a", count: 256)])
    func invalidMembers(_ text: String) {
        #expect(MemberName(rawValue: text) == nil)
    }

    @Test func pathHelpers() throws {
        let device: ObjectPath = "/org/bluez/hci0/dev_00_11"
        #expect(device.parent == "/org/bluez/hci0")
        #expect(device.lastElement == "dev_00_11")
        #expect(ObjectPath.root.parent == nil)
        #expect(try ObjectPath.root.appending("org") == "/org")
        #expect(device.isDescendant(ofOrEqualTo: "/org/bluez"))
        #expect(!ObjectPath("/org/bluez2").isDescendant(ofOrEqualTo: "/org/bluez"))
        #expect(throws: DBusError.self) { try device.appending("a/b") }
    }
}
