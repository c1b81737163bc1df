import Foundation
import GatewayCoreBluetooth
import Testing

/// State restoration: a manager made again with the same restore
/// identifier (a relaunched app) gets what the gateway kept for it, after
/// the client restarts and after the gateway restarts.
@Suite struct CoreBluetoothRestoreTests {
    @Test func aCentralIsRestoredAfterTheClientAndTheGatewayRestart() async throws {
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        var gateway = try await GatewayUnderTest.start(stateDirectory: stateDirectory)

        // The first run: connect to the strap and follow its measurements.
        let first = HeartRateMonitor(gateway: gateway.baseURL, queue: CallbackQueue("first"), restoreIdentifier: "hrm", writes: [])
        let followed = await first.log.wait { $0.values(of: "2A37").count >= 2 }
        #expect(followed.values(of: "2A37").count >= 2)
        first.centralManager.invalidate()
        let kept = try await gateway.get("/v1/kept-connections")
        #expect(kept.array.first?["label"] as? String == "hrm", "\(kept)")

        // The client starts again: its peripheral comes back connected,
        // its characteristic notifying, its values flowing, with no scan.
        try await expectRestored(gateway)

        // Another identifier restores nothing.
        let other = HeartRateMonitor(gateway: gateway.baseURL, queue: CallbackQueue("other"), restoreIdentifier: "other", writes: [])
        let otherLog = await other.log.wait { $0.contains(where: \.isState) }
        #expect(otherLog.allSatisfy { !$0.isRestored })
        other.centralManager.invalidate()

        // The gateway restarts (on a new bus and port, with its state
        // directory): it keeps the connection and the subscription again,
        // and a client that starts then is restored the same.
        await gateway.stop()
        gateway = try await GatewayUnderTest.start(stateDirectory: stateDirectory)
        try await expectRestored(gateway)

        // Cancelling ends what was kept for it.
        let last = HeartRateMonitor(gateway: gateway.baseURL, queue: CallbackQueue("last"), restoreIdentifier: "hrm", writes: [])
        let restored = await last.log.wait { $0.contains(where: \.isRestored) }
        #expect(restored.contains(.restored([TestScenario.strap])))
        let peripheral = try #require(last.heartRatePeripheral)
        last.centralManager.cancelPeripheralConnection(peripheral)
        #expect(await last.log.wait { $0.contains(.disconnected(TestScenario.strap, error: nil)) }.contains(.disconnected(TestScenario.strap, error: nil)))
        #expect(try await gateway.get("/v1/kept-connections").array.isEmpty)
        #expect(try await gateway.get("/v1/subscriptions").array.isEmpty)
        last.centralManager.invalidate()
        await gateway.stop()
    }

    private func expectRestored(_ gateway: GatewayUnderTest) async throws {
        let again = HeartRateMonitor(gateway: gateway.baseURL, queue: CallbackQueue("again"), restoreIdentifier: "hrm", writes: [])
        defer { again.centralManager.invalidate() }
        let log = await again.log.wait { $0.values(of: "2A37").count >= 2 }
        #expect(log.first == .restored([TestScenario.strap]), "willRestoreState comes before the state: \(log.prefix(3))")
        #expect(log.contains(.state(.poweredOn)))
        #expect(log.allSatisfy { !$0.isDiscovered }, "a restored central does not scan for what it has")
        #expect(log.values(of: "2A37").count >= 2)
        let peripheral = try #require(again.heartRatePeripheral)
        #expect(peripheral.state == .connected)
        let measurement = peripheral.services?.first { $0.uuid == HeartRateMonitor.heartRate }?.characteristics?
            .first { $0.uuid == HeartRateMonitor.measurement }
        #expect(measurement?.isNotifying == true)
    }

    @Test func aPeripheralManagerIsRestoredAfterTheGatewayRestarts() async throws {
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        var gateway = try await GatewayUnderTest.start(stateDirectory: stateDirectory)
        let first = Thermometer(gateway: gateway.baseURL, queue: CallbackQueue("thermo"), restoreIdentifier: "thermo")
        _ = await first.log.wait { $0.contains(.added("180D", error: nil)) }
        first.peripheralManager.invalidate()
        await gateway.stop()

        gateway = try await GatewayUnderTest.start(stateDirectory: stateDirectory)
        let again = Thermometer(gateway: gateway.baseURL, queue: CallbackQueue("thermo-again"), restoreIdentifier: "thermo")
        defer { again.peripheralManager.invalidate() }
        let log = await again.log.wait { $0.contains(.state(.poweredOn)) }
        #expect(log.prefix(2) == [.restored(["180D"]), .state(.poweredOn)], "\(log)")
        #expect(log.allSatisfy { !$0.isAdded }, "restored services are not added again")
        // Requests to the restored service reach the new manager's delegate.
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: .init("ff01")!) == [0xca, 0xfe])
        #expect(again.log.all.contains(.read("FF01", offset: 0)))
        await gateway.stop()
    }
}
