import BlueZSimulator
import DBus
import Testing

/// The experimental Device1 properties as `bluetoothd -E` serves them, and
/// their absence from a stock daemon.
@Suite struct AdvertisingDataTests {
    static let eddystonePath = "/org/bluez/hci0/dev_E7_1D_5A_3C_90_11"

    @Test func experimentalServesTheRawADStructures() async throws {
        let harness = try await SimulatorHarness(
            TestScenarios.everything, options: SimulatorOptions(experimental: true, temporaryTimeout: 3000))
        defer { Task { await harness.close() } }
        try await harness.startDiscovery()
        let path = try ObjectPath(Self.eddystonePath)
        try await waitUntil("the Eddystone beacon appears") {
            try await harness.managedPaths().contains(path)
        }
        let data = try #require(try await harness.property(path, "org.bluez.Device1", "AdvertisingData"))
        let entries = data.dictionaryEntries ?? []
        #expect(entries.count == 1)
        #expect(entries.first?.key.byte == 0x24)
        #expect(entries.first?.value.bytes == Array("\u{17}//google.com".utf8))
        #expect(try await harness.property(path, "org.bluez.Device1", "AdvertisingFlags")?.bytes == [0x06])
    }

    @Test func aStockDaemonHasNoAdvertisingData() async throws {
        let harness = try await SimulatorHarness(TestScenarios.everything)
        defer { Task { await harness.close() } }
        try await harness.startDiscovery()
        let path = try ObjectPath(Self.eddystonePath)
        try await waitUntil("the Eddystone beacon appears") {
            try await harness.managedPaths().contains(path)
        }
        let all = try await harness.call(path, .properties, "GetAll", [.string("org.bluez.Device1")])
        let properties = try #require(all.first?.vardict)
        #expect(properties["AdvertisingData"] == nil)
        #expect(properties["AdvertisingFlags"] == nil)
        #expect(properties["ServiceData"] != nil)
    }
}
