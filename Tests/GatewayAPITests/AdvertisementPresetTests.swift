import BlueZ
import Testing

@testable import GatewayAPI

/// The iBeacon and Eddystone-URL presets build the bytes their formats
/// define, and the advertising data length is counted as bluetoothd builds it.
@Suite struct AdvertisementPresetTests {
    @Test func iBeaconIsApplesManufacturerData() throws {
        var advertisement = Advertisement()
        try PeripheralJSON.iBeacon(
            .init(
                json: .object([
                    ("uuid", .string("e2c56db5-dffb-48d2-b060-d0f5a71096e0")), ("major", .int(1)), ("minor", .int(258)),
                    ("measured_power", .int(-59)),
                ]), path: "ibeacon"), into: &advertisement)
        #expect(ByteEncoding.hex(advertisement.manufacturerData[0x004C] ?? [])
            == "0215e2c56db5dffb48d2b060d0f5a71096e0000101" + "02c5")
        #expect(advertisement.type == .broadcast)
        // Flags 3 + manufacturer data 2 + 2 + 23: a full legacy advertisement but for 1 byte.
        #expect(advertisement.dataLength == 30)
    }

    @Test func eddystoneURLUsesTheExpansionCodes() throws {
        var advertisement = Advertisement()
        try PeripheralJSON.eddystoneURL("https://example.com/x", into: &advertisement)
        let eddystone = BluetoothUUID(uuid16: 0xFEAA)
        // Frame 0x10, TX power 0xEB, scheme https:// (0x03), "example", .com/ (0x00), "x".
        #expect(ByteEncoding.hex(advertisement.serviceData[eddystone] ?? []) == "10eb03" + "6578616d706c65" + "00" + "78")
        #expect(advertisement.serviceUUIDs == [eddystone])
        #expect(throws: Problem.self) { try PeripheralJSON.eddystoneURL("ftp://example.com", into: &advertisement) }
        #expect(throws: Problem.self) {
            try PeripheralJSON.eddystoneURL("https://a-very-long-host-name.example/path", into: &advertisement)
        }
    }

    @Test func dataLengthCountsWhatBluetoothdAdds() throws {
        #expect(Advertisement().dataLength == 3)
        let uuids = Advertisement(serviceUUIDs: [BluetoothUUID(uuid16: 0x180d), BluetoothUUID(uuid16: 0x180f)])
        #expect(uuids.dataLength == 3 + 2 + 4)
        let long = Advertisement(serviceUUIDs: [try BluetoothUUID(parsing: "12345678-1234-5678-1234-56789abcdef0")])
        #expect(long.dataLength == 3 + 2 + 16)
        let full = Advertisement(manufacturerData: [0xFFFF: Array(repeating: 0, count: 25)], includeTxPower: true)
        #expect(full.dataLength == 35)
        #expect(throws: BlueZError.self) { try full.validate() }
        #expect(throws: BlueZError.self) { try Advertisement(minInterval: 200, maxInterval: 100).validate() }
        try Advertisement(localName: "thermo", appearance: 832, minInterval: 100, maxInterval: 200).validate()
    }
}
