import Foundation
import Testing

@testable import BlueZ

@Suite struct BluetoothUUIDTests {
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"

    @Test(arguments: [
        "2a37", "2A37", "0x2a37", "0X2A37", "00002a37", "0x00002A37",
        "00002a37-0000-1000-8000-00805f9b34fb", "00002A37-0000-1000-8000-00805F9B34FB",
        "00002a3700001000800000805f9b34fb", "00002A3700001000800000805F9B34FB",
    ])
    func parsesFormsOfTheSameUUID(_ text: String) throws {
        let uuid = try BluetoothUUID(parsing: text)
        #expect(uuid == BluetoothUUID(uuid16: 0x2A37))
        #expect(uuid.description == Self.heartRateMeasurement)
        #expect(uuid.shortString == "2a37")
        #expect(uuid.assignedNumber == 0x2A37)
    }

    @Test(arguments: [
        "", "2a3", "2a377", "0x", "0x2a3", "2a37 ", " 2a37", "zz37", "0x2a37-", "002a37",
        "0x00002a37-0000-1000-8000-00805f9b34fb", "00002a37-0000-1000-8000-00805f9b34f",
        "00002a37-0000-1000-8000-00805f9b34fbb", "00002a370000-1000-8000-00805f9b34fb-",
        "{00002a37-0000-1000-8000-00805f9b34fb}", "00002a37_0000_1000_8000_00805f9b34fb",
        "0x00002a3700001000800000805f9b34fb", "00002a37-00001000-8000-00805f9b34fb0",
        "+2a3", "-2a3", "2a37h",
    ])
    func rejectsEverythingElse(_ text: String) {
        #expect(throws: ParseError.self) { try BluetoothUUID(parsing: text) }
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func shortAndLongFormsAreEqualAndHashAlike() throws {
        let short = try BluetoothUUID(parsing: "180d")
        let long = try BluetoothUUID(parsing: "0000180D-0000-1000-8000-00805F9B34FB")
        #expect(short == long)
        #expect(Set([short, long]).count == 1)
        #expect(BluetoothUUID(uuid32: 0x180D) == short)
    }

    @Test func thirtyTwoBitNumbers() throws {
        let uuid = try BluetoothUUID(parsing: "0x12345678")
        #expect(uuid.description == "12345678-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortString == "12345678")
        #expect(uuid.assignedNumber == 0x1234_5678)
        #expect(BluetoothUUID(uuid32: 0x1234_5678) == uuid)
    }

    @Test func vendorUUIDsHaveNoShortForm() throws {
        let nordicUART = try BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(nordicUART.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(nordicUART.shortString == nordicUART.description)
        #expect(nordicUART.assignedNumber == nil)
        // One bit away from the base UUID is not on it.
        let nearBase = try BluetoothUUID(parsing: "00002a37-0000-1000-8000-00805f9b34fa")
        #expect(nearBase.assignedNumber == nil)
        #expect(nearBase != BluetoothUUID(uuid16: 0x2A37))
    }

    @Test(arguments: ["0000", "ffff", "ffffffff", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"])
    func canonicalStringRoundTrips(_ text: String) throws {
        let uuid = try BluetoothUUID(parsing: text)
        #expect(try BluetoothUUID(parsing: uuid.description) == uuid)
        #expect(try BluetoothUUID(parsing: uuid.shortString) == uuid)
    }

    /// The text the API writes (`uuidString`) and reads (`init(parsing:)`).
    @Test func writtenAsCanonicalString() throws {
        let uuid = BluetoothUUID(uuid16: 0x2A37)
        #expect(uuid.uuidString == Self.heartRateMeasurement)
        #expect(try BluetoothUUID(parsing: "0x2A37") == uuid)
        #expect(throws: ParseError.self) {
            try BluetoothUUID(parsing: "2a3")
        }
    }
}
