import Foundation
import GatewayCoreBluetooth
import Testing
import TestSupport

/// Core Bluetooth's central through a fleet: two gateways on one real
/// mosquitto, each over its own simulator; only g-b hears the strap. The
/// seeds' heart-rate monitor, given g-a and `CBManagerOptionGatewayFleetKey`,
/// runs as it does on g-b itself; its connect keeps the strap by the fleet,
/// which g-b holds.
@Suite(.serialized) struct CoreBluetoothFleetTests {
    /// g-a's world: an adapter and a beacon, no strap.
    static let lonely = """
        timing: 0.01
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:31"
        devices:
          - address: "F1:E2:D3:C4:B5:31"
            name: Hall beacon
            rssi: -70
            advertising: { interval: 0.2, uuids: ["180f"] }
        """

    /// The test world with the strap's signal moving (±6 dB), as a real
    /// one's does. A fleet scan learns advertisements from the events the
    /// gateways publish: a strap whose advertisement never changed would be
    /// published once, when g-b first heard it, which a scan opened later
    /// does not see (docs/fleet.md, "Cost and limits").
    static func moving(_ scenario: String) throws -> String {
        let still = "name: Strap 3E01\n    rssi: -58\n"
        try #require(scenario.contains(still), "the strap's lines in TestScenario changed")
        return scenario.replacingOccurrences(of: still, with: still + "    rssiJitter: 6\n")
    }

    @Test func theSeedsCentralFlowThroughAGatewayThatDoesNotHearTheStrap() async throws {
        let broker = try await Broker.start()
        let a = try await GatewayUnderTest.start(
            scenario: Self.lonely, arguments: ["--mqtt", broker.url, "--gateway-id", "g-a", "--mqtt-commands"])
        let b = try await GatewayUnderTest.start(
            scenario: try Self.moving(TestScenario.yaml), arguments: ["--mqtt", broker.url, "--gateway-id", "g-b", "--mqtt-commands"])
        // g-b publishes what it hears while it scans.
        let scan = try b.stream("/v1/scan")
        let queue = CallbackQueue("central-fleet")
        let monitor = HeartRateMonitor(gateway: a.baseURL, queue: queue, fleet: true)

        let entries = await monitor.log.wait { entries in
            entries.values(of: "2A38").count >= 1 && entries.values(of: "2A37").count >= 3
                && entries.filter(\.isWritten).count >= 2
        }
        #expect(entries.first == .state(.poweredOn))
        #expect(!entries.contains(.wrongQueue), "every callback comes on the manager's queue")
        let discovered = entries.compactMap { entry -> (String, String?, [String], Data?)? in
            if case .discovered(let address, let name, let services, let manufacturer, _) = entry {
                return (address, name, services, manufacturer)
            }
            return nil
        }
        let strap = try #require(discovered.first, "\(entries.suffix(5))")
        #expect(strap.0 == TestScenario.strap)
        #expect(strap.1 == "Strap 3E01")
        #expect(strap.2 == ["180D"])
        #expect(strap.3 == Data([0x6b, 0x00, 0x3f, 0x00]))
        #expect(entries.contains(.connected(TestScenario.strap)))
        #expect(entries.contains(.characteristics("180D", ["2A37", "2A38", "2A39"])))
        #expect(entries.values(of: "2A38") == [Data([0x01])])
        #expect(entries.contains(.notifying("2A37", true, error: nil)))
        let writes = entries.compactMap { entry -> (String?, Int?)? in
            if case .written("2A39", let error, let code) = entry { return (error, code) }
            return nil
        }
        #expect(writes.count == 2)
        #expect(writes.first?.0 == nil)
        #expect(writes.last?.1 == 0x80, "the holder's ATT error, carried back: \(writes)")

        // The fleet keeps it and g-b holds it; g-a never made a connection.
        let kept = try await a.get("/v1/fleet/devices/\(TestScenario.strap)").object
        #expect(kept["owner"] as? String == "g-b", "\(kept)")
        #expect(kept["connected_on"] as? [String] == ["g-b"], "\(kept)")
        #expect(kept["fleet_keep"] is [String: Any], "\(kept)")
        #expect(try await b.get("/v1/devices/\(TestScenario.strap)").object["connected"] as? Bool == true)
        #expect(try await a.get("/v1/devices/\(TestScenario.strap)").status == 404)

        // A link lost where the device is: the manager hears it from the
        // fleet's events, and the holder connects it again.
        let peripheral = try #require(monitor.heartRatePeripheral)
        _ = try await b.request("POST", "/v1/devices/\(TestScenario.strap)/disconnect")
        let connected = HeartRateMonitor.Entry.connected(TestScenario.strap)
        let lost = await monitor.log.wait { entries in
            entries.contains(where: \.isLinkLoss) && entries.filter { $0 == connected }.count >= 2
        }
        #expect(lost.contains { $0.isLinkLoss }, "\(lost.suffix(5))")
        #expect(lost.filter { $0 == connected }.count >= 2, "connected again by its holder: \(lost.suffix(5))")

        monitor.centralManager.cancelPeripheralConnection(peripheral)
        let ended = await monitor.log.wait { $0.contains(.disconnected(TestScenario.strap, error: nil)) }
        #expect(ended.contains(.disconnected(TestScenario.strap, error: nil)), "\(ended.suffix(5))")
        let released = try await a.get("/v1/fleet/devices/\(TestScenario.strap)").object
        #expect(released["fleet_keep"] is NSNull, "\(released)")
        #expect(try await b.get("/v1/devices/\(TestScenario.strap)").object["connected"] as? Bool == false)
        monitor.centralManager.invalidate()
        scan.close()
        #expect(await a.stop() == 0)
        #expect(await b.stop() == 0)
        await broker.stop()
    }
}

extension HeartRateMonitor.Entry {
    /// A disconnection with an error: the link was lost, not cancelled.
    fileprivate var isLinkLoss: Bool {
        if case .disconnected(_, let error) = self { error != nil } else { false }
    }
}
