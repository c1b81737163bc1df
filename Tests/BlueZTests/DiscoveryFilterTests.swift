import DBus
import Testing

@testable import BlueZ

@Suite struct DiscoveryFilterTests {
    func device(name: String?, rssi: Int16?, uuids: [UInt16] = [], company: UInt16? = nil) throws -> Device {
        var device = Device(path: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", adapter: "hci0", address: try address("AA:BB:CC:DD:EE:FF"))
        device.advertisement.localName = name
        device.advertisement.rssi = rssi
        device.advertisement.serviceUUIDs = uuids.map { BluetoothUUID(uuid16: $0) }
        if let company { device.advertisement.manufacturerData[CompanyIdentifier(company)] = [1] }
        return device
    }

    @Test func aNewSessionReportsHeardAndTemporaryDevices() throws {
        // Heard in the running scan (an RSSI), whatever it is.
        var heard = try device(name: "Polar H10", rssi: -60)
        heard.paired = true
        #expect(Central.isAround(heard))
        // Not heard since discovery stopped, but temporary: bluetoothd keeps
        // it only 30 s after it was last heard.
        let temporary = try device(name: "Polar H10", rssi: nil)
        #expect(Central.isAround(temporary))
        // Listed whether in range or not: not until heard.
        for keep in [\Device.paired, \Device.bonded, \Device.trusted, \Device.blocked, \Device.connected] {
            var listed = temporary
            listed[keyPath: keep] = true
            #expect(!Central.isAround(listed), "\(keep)")
        }
    }

    @Test func emptyFilterMatchesEverything() throws {
        #expect(DiscoveryFilter().matches(try device(name: nil, rssi: nil)))
    }

    @Test func eachConditionMustHold() throws {
        let strap = try device(name: "Polar H10", rssi: -60, uuids: [0x180d], company: 0x006b)
        #expect(DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x180d)]).matches(strap))
        #expect(!DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x1809)]).matches(strap))
        #expect(DiscoveryFilter(name: "Polar H10").matches(strap))
        #expect(!DiscoveryFilter(name: "Polar").matches(strap))
        #expect(DiscoveryFilter(namePrefix: "Polar").matches(strap))
        #expect(DiscoveryFilter(minimumRSSI: -70).matches(strap))
        #expect(!DiscoveryFilter(minimumRSSI: -50).matches(strap))
        #expect(DiscoveryFilter(manufacturerID: 0x006b).matches(strap))
        #expect(!DiscoveryFilter(manufacturerID: 0x004c).matches(strap))
        #expect(!DiscoveryFilter(namePrefix: "Polar", minimumRSSI: -50).matches(strap))
    }

    @Test func rssiNotAvailablePassesAFloorAsInBluetoothd() throws {
        #expect(DiscoveryFilter(minimumRSSI: -40).matches(try device(name: nil, rssi: 127)))
        #expect(!DiscoveryFilter(minimumRSSI: -40).matches(try device(name: nil, rssi: nil)))
    }

    @Test func mergedFilterIsLooseEnoughForEverySession() {
        let heart = DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x180d)], minimumRSSI: -70)
        let thermo = DiscoveryFilter(serviceUUIDs: [BluetoothUUID(uuid16: 0x1809)], minimumRSSI: -90, allowDuplicates: true)
        let merged = MergedDiscoveryFilter(merging: [heart, thermo])
        #expect(Set(merged.serviceUUIDs) == [BluetoothUUID(uuid16: 0x180d), BluetoothUUID(uuid16: 0x1809)])
        #expect(merged.rssi == -90)
        #expect(merged.duplicateData)
        let any = MergedDiscoveryFilter(merging: [heart, DiscoveryFilter()])
        #expect(any.serviceUUIDs.isEmpty)
        #expect(any.rssi == nil)
        #expect(!any.duplicateData)
        #expect(Adapter1.filterArgument(any).vardict?["Transport"]?.string == "le")
    }
}
