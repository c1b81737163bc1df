import BlueZSimulator
import DBus
import Testing
import TestSupport

@testable import BlueZ

/// `Central.Options.adapterScope` (`serve --use-adapters`): a central that
/// uses only hci1 of a bluetoothd with two adapters neither shows nor
/// touches hci0, which another central on the same bus watches.
@Suite struct AdapterScopeTests {
    @Test func aPathIsInScopeUnderAnAdapterOfTheScopeOrUnderNone() {
        let scope = AdapterScope(adapters: ["hci1"])
        #expect(scope.includes(ObjectPath("/org/bluez/hci1")))
        #expect(scope.includes(ObjectPath("/org/bluez/hci1/dev_C0_00_00_00_00_01/service0001")))
        #expect(!scope.includes(ObjectPath("/org/bluez/hci0")))
        #expect(!scope.includes(ObjectPath("/org/bluez/hci0/dev_C0_00_00_00_00_01")))
        #expect(!scope.includes(ObjectPath("/org/bluez/hci10")))
        #expect(scope.includes(ObjectPath("/org/bluez")))
        #expect(scope.includes(ObjectPath("/")))
        #expect(AdapterScope.all.includes(ObjectPath("/org/bluez/hci0")))
    }

    @Test(.timeLimit(.minutes(2))) func aScopedCentralNeitherShowsNorTouchesTheOtherAdapter() async throws {
        // hci0 hears the peer far better: an unscoped central would connect there.
        let peer = ConnectionPoolTests.near
        var options = Central.Options()
        options.adapterScope = AdapterScope(adapters: ["hci1"])
        let harness = try await Harness(
            scenario: try ConnectionPoolTests.scenario([peer: (-40, -90)]), central: options)
        let watcherConnection = try await harness.bus.connect()
        let watcher = Central(connection: watcherConnection)
        try await watcher.start()

        #expect(harness.central.adapters().map(\.id) == ["hci1"])
        #expect(watcher.adapters().map(\.id).sorted() == ["hci0", "hci1"])
        #expect(throws: BlueZError.self) { try harness.central.adapter("hci0") }
        await #expect(throws: BlueZError.self) { _ = try await harness.central.scan(adapter: "hci0") }

        let session = try await harness.central.scan()
        let heard = await eventually(within: .seconds(30)) { harness.central.devices().contains { $0.address == peer } }
        #expect(heard)
        #expect(harness.central.devices().allSatisfy { $0.adapter == "hci1" })
        let hci0Discovering = watcher.adapters().first { $0.id == "hci0" }?.discovering
        let device = try await harness.central.connect(peer, timeout: .seconds(20))
        #expect(device.adapter == "hci1", "hci0 is out of scope, however well it hears the peer")
        #expect(harness.central.connectionSlots().map(\.adapter) == ["hci1"])
        let seenFromHci0 = try? watcher.device(peer, adapter: "hci0")
        _ = session
        await watcher.stop()
        watcherConnection.close()
        await harness.shutdown()
        #expect(hci0Discovering == false, "the scoped central's scan left hci0 alone")
        #expect(seenFromHci0?.connected != true)
    }
}
