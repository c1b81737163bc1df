import BlueZ
import Testing

@Suite struct AdvertisementPatternTests {
    @Test func parsesAndPrintsStartTypeAndContent() throws {
        let pattern = try #require(AdvertisementPattern(parsing: "0:ff:4C00"))
        #expect(pattern == AdvertisementPattern(start: 0, adType: 0xff, content: [0x4c, 0x00]))
        #expect(pattern.description == "0:ff:4c00")
        #expect(AdvertisementPattern(parsing: "3:0x16:1a18")?.adType == 0x16)
        for bad in ["", "0:ff", "0:ff:4c0", "0:ff:zz", "256:ff:00", "0:100:00", "a:ff:00", "0:ff:00:00"] {
            #expect(AdvertisementPattern(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func theProblemsBluetoothdRefuses() {
        #expect(AdvertisementPattern(adType: 0xff, content: []).problem != nil)
        #expect(AdvertisementPattern(adType: 0xff, content: Array(repeating: 1, count: 32)).problem != nil)
        #expect(AdvertisementPattern(adType: 0xff, content: Array(repeating: 1, count: 31)).problem == nil)
        #expect(AdvertisementPattern(adType: 0x00, content: [1]).problem != nil)
        #expect(AdvertisementPattern(adType: 0x3e, content: [1]).problem != nil)
        #expect(AdvertisementPattern(adType: 0x3d, content: [1]).problem == nil)
    }

    @Test func patternsDerivedFromAFilter() throws {
        var filter = DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x180d)], namePrefix: "Polar")
        filter.manufacturerID = 0x004c
        filter.serviceDataUUIDs = [BluetoothUUID(uuid16: 0xfcd2), try BluetoothUUID(parsing: "12345678-1234-5678-1234-56789abcdef0")]
        let derived = Set(AdvertisementPattern.derived(from: filter).map(\.description))
        #expect(
            derived == [
                "0:ff:4c00", "0:16:d2fc", "0:21:f0debc9a785634127856341278563412", "0:02:0d18", "0:03:0d18",
                "0:09:506f6c6172", "0:08:506f6c6172",
            ])
        #expect(AdvertisementPattern.derived(from: DiscoveryFilter()).isEmpty)
    }

    @Test func lowDutyDiscoveryKeepsItsWindowWithinItsPeriod() {
        #expect(LowDutyDiscovery().dutyCycle == 1.0 / 6)
        #expect(LowDutyDiscovery(window: .seconds(10), period: .seconds(5)).period == .seconds(10))
    }
}
