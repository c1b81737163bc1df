import Foundation
import GatewayCoreBluetooth
import Testing

@Suite struct CBUUIDTests {
    @Test(arguments: [
        ("180d", "180D", 2), ("0x180D", "180D", 2), ("0000180d-0000-1000-8000-00805f9b34fb", "180D", 2),
        ("0000180D00001000800000805F9B34FB", "180D", 2), ("12345678", "12345678", 4),
        ("12345678-0000-1000-8000-00805F9B34FB", "12345678", 4),
        ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", 16),
    ])
    func printsAsCoreBluetoothDoes(text: String, printed: String, bytes: Int) throws {
        let uuid = try #require(CBUUID(validating: text))
        #expect(uuid.uuidString == printed)
        #expect(uuid.data.count == bytes)
        #expect(CBUUID(data: uuid.data) == uuid)
        #expect(CBUUID(string: printed) == uuid)
    }

    @Test func equalWhateverTheForm() {
        #expect(CBUUID(string: "2A37") == CBUUID(string: "00002a37-0000-1000-8000-00805f9b34fb"))
        #expect(CBUUID(string: "2A37").hash == CBUUID(string: "00002A37-0000-1000-8000-00805F9B34FB").hash)
        #expect(CBUUID(string: "2A37") != CBUUID(string: "2A38"))
        #expect(Set([CBUUID(string: "180D"), CBUUID(string: "0x180d")]).count == 1)
        #expect(CBUUID(string: "180D").gatewayString == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(CBUUID(nsuuid: UUID(uuidString: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!).uuidString == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    }

    @Test(arguments: ["", "18", "180g", "12345", "0000180d-0000-1000-8000-00805f9b34f", "0000180d_0000_1000_8000_00805f9b34fb"])
    func refusesWhatIsNoUUID(text: String) {
        #expect(CBUUID(validating: text) == nil)
    }
}
