import Testing

@testable import BlueZ

/// The decoders against frames of the published formats.
@Suite struct AdvertisementDecoderTests {
    func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
    }

    func decode(_ hex: String, company: UInt16) -> DecodedAdvertisement? {
        AdvertisementDecoder.decode(bytes(hex), at: .manufacturer(CompanyIdentifier(company)))
    }

    func decode(_ hex: String, service: UInt16) -> DecodedAdvertisement? {
        AdvertisementDecoder.decode(bytes(hex), at: .serviceData(BluetoothUUID(uuid16: service)))
    }

    @Test func iBeaconOfApplesAirLocateSample() throws {
        // Proximity UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1,
        // minor 2, measured power -59 dBm.
        let result = try #require(decode("0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5", company: 0x004C))
        #expect(result.format == "ibeacon")
        #expect(result["uuid"] == .text("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        #expect(result["major"] == .integer(1))
        #expect(result["minor"] == .integer(2))
        #expect(result["measured_power"] == .integer(-59))
        // A trailing sequence byte is ignored.
        #expect(decode("0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5 07", company: 0x004C)?["minor"] == .integer(2))
    }

    @Test func otherAppleDataAndShortFramesAreNotIBeacons() {
        #expect(decode("1005 0b1c 0a7e 2f", company: 0x004C) == nil)
        #expect(decode("0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 00", company: 0x004C) == nil)
        // The same bytes under another company are not Apple's format.
        #expect(decode("0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5", company: 0x0059) == nil)
    }

    @Test func eddystoneUID() throws {
        // The specification's example namespace (a truncated hash of
        // the FQDN) with an instance, and the two reserved bytes.
        let result = try #require(decode("00 e7 edd1ebeac04e5defa017 0bdb87539b67 0000", service: 0xFEAA))
        #expect(result.format == "eddystone-uid")
        #expect(result["tx_power"] == .integer(-25))
        #expect(result["namespace"] == .text("edd1ebeac04e5defa017"))
        #expect(result["instance"] == .text("0bdb87539b67"))
    }

    @Test func eddystoneURLExpandsSchemesAndEndings() throws {
        let google = try #require(decode("10 eb 03 676f6f676c65 07", service: 0xFEAA))
        #expect(google.format == "eddystone-url")
        #expect(google["tx_power"] == .integer(-21))
        #expect(google["url"] == .text("https://google.com"))
        let page = try #require(decode("10 00 00 6578616d706c65 00 696e646578", service: 0xFEAA))
        #expect(page["url"] == .text("http://www.example.com/index"))
        // 0x0E to 0x20 are reserved, as is a scheme past 3.
        #expect(decode("10 00 03 61 0e", service: 0xFEAA) == nil)
        #expect(decode("10 00 04 61", service: 0xFEAA) == nil)
    }

    @Test func eddystoneTLM() throws {
        let result = try #require(decode("20 00 0bb8 1680 00000e10 00002328", service: 0xFEAA))
        #expect(result.format == "eddystone-tlm")
        #expect(result["battery_mv"] == .integer(3000))
        #expect(result["temperature"] == .number(22.5))
        #expect(result["advertisement_count"] == .integer(3600))
        #expect(result["uptime_s"] == .number(900))
        // Battery 0 and temperature 0x8000: not supported, left out.
        let bare = try #require(decode("20 00 0000 8000 00000001 0000000a", service: 0xFEAA))
        #expect(bare["battery_mv"] == nil)
        #expect(bare["temperature"] == nil)
        #expect(bare["uptime_s"] == .number(1))
        // Encrypted TLM (version 1) is not decoded.
        #expect(decode("21 01 00112233445566778899aabb", service: 0xFEAA) == nil)
    }

    @Test func bthomeTemperatureAndHumidity() throws {
        // bthome.io/format's examples: 02 c409 is 25.00 °C, 03 bf13 50.55 %.
        let result = try #require(decode("40 02c409 03bf13", service: 0xFCD2))
        #expect(result.format == "bthome")
        #expect(result["version"] == .integer(2))
        #expect(result["encrypted"] == .flag(false))
        #expect(result["temperature"] == .number(25))
        #expect(result["humidity"] == .number(50.55))
        // A thermometer's frame with packet id and battery.
        let atc = try #require(decode("40 001b 0164 02c808 036c1a", service: 0xFCD2))
        #expect(atc["packet_id"] == .integer(27))
        #expect(atc["battery"] == .integer(100))
        #expect(atc["temperature"] == .number(22.48))
        #expect(atc["humidity"] == .number(67.64))
    }

    @Test func bthomeObjectTableExamples() throws {
        // One example per kind of value, from the format's object table.
        let cases: [(String, String, DecodedAdvertisement.Value)] = [
            ("0161", "battery", .integer(97)),
            ("08ca06", "dewpoint", .number(17.38)),
            ("04138a01", "pressure", .number(1008.83)),
            ("0b021b00", "power", .number(69.14)),
            ("3f020c", "rotation", .number(307.4)),
            ("5d02ea", "current", .number(-5.63)),
            ("5aeaea", "count", .integer(-5398)),
            ("3e2a2c0960", "count", .integer(1_611_213_866)),
            ("424e3400", "duration", .number(13.39)),
            ("2d01", "window", .flag(true)),
        ]
        for (hex, name, value) in cases {
            let result = try #require(decode("40" + hex, service: 0xFCD2), "\(hex)")
            #expect(result[name] == value, "\(hex)")
        }
    }

    @Test func bthomeRepeatsUnknownIdsAndEncryption() throws {
        let two = try #require(decode("40 02c409 02c809", service: 0xFCD2))
        #expect(two["temperature"] == .number(25))
        #expect(two["temperature_2"] == .number(25.04))
        // An id the table does not know stops the decoding.
        let unknown = try #require(decode("40 0161 fe0102", service: 0xFCD2))
        #expect(unknown["battery"] == .integer(97))
        #expect(unknown["undecoded"] == .bytes([0xFE, 0x01, 0x02]))
        // Encrypted: only the device information.
        let encrypted = try #require(decode("41 a4b2c3d4e5f6 00112233 44556677", service: 0xFCD2))
        #expect(encrypted["encrypted"] == .flag(true))
        #expect(encrypted["temperature"] == nil)
        // BTHome v1's device info is not version 2.
        #expect(decode("20 02c409", service: 0xFCD2) == nil)
    }

    @Test func anAdvertisementListsWhatTheTableDecodes() {
        var advertisement = AdvertisementData()
        advertisement.manufacturerData[CompanyIdentifier(0x004C)] = bytes("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        advertisement.manufacturerData[CompanyIdentifier(0x006B)] = bytes("3f00")
        advertisement.serviceData[BluetoothUUID(uuid16: 0xFCD2)] = bytes("4002c409")
        advertisement.serviceData[BluetoothUUID(uuid16: 0x1809)] = bytes("fe0a0000")
        let decoded = advertisement.decoded
        #expect(decoded.map(\.format) == ["ibeacon", "bthome"])
        #expect(decoded.map(\.source) == [.manufacturer(CompanyIdentifier(0x004C)), .serviceData(BluetoothUUID(uuid16: 0xFCD2))])
    }

    @Test func theTableTakesNewEntries() {
        // A decoder is a key and a function: the same shape a new entry of
        // the table has.
        let entry = AdvertisementDecoder(.manufacturer(CompanyIdentifier(0xFFFF)), format: "test") { bytes in
            bytes.count == 1 ? [.init("value", .integer(Int(bytes[0])))] : nil
        }
        #expect(entry.decode([7]) == [.init("value", .integer(7))])
        #expect(AdvertisementDecoder.table.map(\.format).contains("bthome"))
    }
}
