import Foundation
import Testing

@testable import BlueZ

@Suite struct BluetoothAddressTests {
    @Test(arguments: [
        "AA:BB:CC:DD:EE:FF", "aa:bb:cc:dd:ee:ff", "Aa:bB:cC:Dd:eE:Ff",
        "AA-BB-CC-DD-EE-FF", "aa-bb-cc-dd-ee-ff", "AABBCCDDEEFF", "aabbccddeeff",
    ])
    func parsesAcceptedForms(_ text: String) throws {
        let address = try BluetoothAddress(parsing: text)
        #expect(address.description == "AA:BB:CC:DD:EE:FF")
        #expect(address.bytes == [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect(address.rawValue == 0xAABB_CCDD_EEFF)
    }

    @Test(arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:F", "AA:BB:CC:DD:EE:FFF",
        "AA:BB-CC:DD:EE:FF", "AA_BB_CC_DD_EE_FF", "AA.BB.CC.DD.EE.FF", "AABBCCDDEEF", "AABBCCDDEEFF0",
        "GG:BB:CC:DD:EE:FF", " AA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF ", "AA::BB:CC:DD:EE:F",
        "0xAABBCCDDEEFF", "A:BB:CC:DD:EE:FF0", "+ABBCCDDEEFF", "AA:BB:CC:DD:EE:ＦＦ",
    ])
    func rejectsEverythingElse(_ text: String) {
        #expect(throws: ParseError.self) { try BluetoothAddress(parsing: text) }
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func errorCarriesCodeAndInput() {
        #expect {
            try BluetoothAddress(parsing: "nope")
        } throws: { error in
            guard let error = error as? ParseError else { return false }
            return error.code == .invalidAddress && error.message.contains("'nope'")
        }
    }

    @Test func bytesAndRawValueRoundTrip() throws {
        let address = try #require(BluetoothAddress(bytes: [0x00, 0x1A, 0x7D, 0xDA, 0x71, 0x13]))
        #expect(address.description == "00:1A:7D:DA:71:13")
        #expect(BluetoothAddress(rawValue: address.rawValue) == address)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6, 7]) == nil)
        #expect(BluetoothAddress(rawValue: 1 << 48) == nil)
    }

    @Test func equalityAndOrderFollowTheBytes() throws {
        let low = try BluetoothAddress(parsing: "00:00:00:00:00:FF")
        let high = try BluetoothAddress(parsing: "01:00:00:00:00:00")
        #expect(low < high)
        #expect(try BluetoothAddress(parsing: "aabbccddeeff") == BluetoothAddress(parsing: "AA-BB-CC-DD-EE-FF"))
        #expect(Set([low, high, low]).count == 2)
    }

    /// The text the API writes (`description`) and reads (`init(parsing:)`).
    @Test func writtenAsCanonicalString() throws {
        let address = try BluetoothAddress(parsing: "aa-bb-cc-dd-ee-ff")
        #expect(address.description == "AA:BB:CC:DD:EE:FF")
        #expect(try BluetoothAddress(parsing: "aabbccddeeff") == address)
        #expect(throws: ParseError.self) {
            try BluetoothAddress(parsing: "aabbccddee")
        }
    }

    @Test func everyHexDigitPrints() throws {
        #expect(try BluetoothAddress(parsing: "01:23:45:67:89:ab").description == "01:23:45:67:89:AB")
        #expect(try BluetoothAddress(parsing: "cdef00ff10f0").description == "CD:EF:00:FF:10:F0")
        #expect(BluetoothAddress(rawValue: 0)?.objectPathElement == "dev_00_00_00_00_00_00")
        #expect(BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF)?.description == "FF:FF:FF:FF:FF:FF")
    }

    @Test func objectPathElementRoundTrip() throws {
        let address = try BluetoothAddress(parsing: "aa:bb:cc:dd:ee:ff")
        #expect(address.objectPathElement == "dev_AA_BB_CC_DD_EE_FF")
        #expect(try BluetoothAddress(objectPathElement: "dev_AA_BB_CC_DD_EE_FF") == address)
        #expect(try BluetoothAddress(objectPathElement: "dev_aa_bb_cc_dd_ee_ff") == address)
    }

    @Test(arguments: [
        "AA_BB_CC_DD_EE_FF", "dev_AA:BB:CC:DD:EE:FF", "dev_AA-BB-CC-DD-EE-FF", "dev_AABBCCDDEEFF",
        "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "dev_AA_BB_CC_DD_EE_FF/service0001", "Dev_AA_BB_CC_DD_EE_FF",
        "dev_AA_BB_CC_DD_EE", "hci0",
    ])
    func rejectsOtherPathElements(_ element: String) {
        #expect(throws: ParseError.self) { try BluetoothAddress(objectPathElement: element) }
    }

    @Test(arguments: [
        ("3F:00:00:00:00:01", BluetoothAddress.RandomSubtype.nonResolvablePrivate),
        ("40:00:00:00:00:01", .resolvablePrivate),
        ("7F:FF:FF:FF:FF:FF", .resolvablePrivate),
        ("80:00:00:00:00:01", .reserved),
        ("C0:00:00:00:00:01", .static),
        ("FF:FF:FF:FF:FF:FF", .static),
    ])
    func randomSubtypeFromTopBits(_ text: String, _ subtype: BluetoothAddress.RandomSubtype) throws {
        #expect(try BluetoothAddress(parsing: text).randomSubtype == subtype)
    }

    @Test func addressTypeUsesBlueZStrings() {
        #expect(AddressType(rawValue: "public") == .public)
        #expect(AddressType(rawValue: "random") == .random)
        #expect(AddressType(rawValue: "Random") == nil)
    }
}
