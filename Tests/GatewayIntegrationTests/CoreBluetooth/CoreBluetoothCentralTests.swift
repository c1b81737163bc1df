import Foundation
import GatewayCoreBluetooth
import Testing

/// Core Bluetooth's central API over the real gateway on the simulator:
/// the seeds' heart-rate monitor, unchanged but for its import.
@Suite struct CoreBluetoothCentralTests {
    @Test func theSeedsCentralFlow() async throws {
        let gateway = try await GatewayUnderTest.start()
        let queue = CallbackQueue("central-flow")
        let monitor = HeartRateMonitor(gateway: gateway.baseURL, queue: queue)
        defer { monitor.centralManager.invalidate() }

        // State, then the scan for 180D finds the strap with its advertisement.
        let entries = await monitor.log.wait { entries in
            entries.values(of: "2A38").count >= 1 && entries.values(of: "2A37").count >= 3
                && entries.filter(\.isWritten).count >= 2
        }
        #expect(entries.first == .state(.poweredOn))
        #expect(!entries.contains(.wrongQueue), "every callback comes on the manager's queue")
        let discovered = entries.compactMap { entry -> (String, String?, [String], Data?, Int)? in
            if case .discovered(let address, let name, let services, let manufacturer, let rssi) = entry {
                return (address, name, services, manufacturer, rssi)
            }
            return nil
        }
        let strap = try #require(discovered.first)
        #expect(strap.0 == TestScenario.strap)
        #expect(strap.1 == "Strap 3E01")
        #expect(strap.2 == ["180D"])
        #expect(strap.3 == Data([0x6b, 0x00, 0x3f, 0x00]), "manufacturer data starts with the company id, little-endian")
        #expect(strap.4 < 0)
        #expect(entries.contains(.connected(TestScenario.strap)))
        #expect(entries.contains(.services(["180D"])))
        #expect(entries.contains(.characteristics("180D", ["2A37", "2A38", "2A39"])))
        #expect(entries.values(of: "2A38") == [Data([0x01])])
        #expect(entries.contains(.notifying("2A37", true, error: nil)))
        #expect(entries.values(of: "2A37").allSatisfy { $0.count >= 2 }, "heart-rate measurements")

        // The control point takes 01 and refuses 02 with its ATT error.
        let writes = entries.compactMap { entry -> (String?, Int?)? in
            if case .written("2A39", let error, let code) = entry { return (error, code) }
            return nil
        }
        #expect(writes.count == 2)
        #expect(writes.first?.0 == nil)
        #expect(writes.last?.1 == 0x80, "\(writes)")

        // The connection is the gateway's kept connection until cancelled.
        let kept = try await gateway.get("/v1/kept-connections")
        #expect((kept.array.first?["address"] as? String) == TestScenario.strap)
        let peripheral = try #require(monitor.heartRatePeripheral)
        #expect(peripheral.state == .connected)
        #expect(monitor.centralManager.retrievePeripherals(withIdentifiers: [peripheral.identifier]) == [peripheral])
        #expect(monitor.centralManager.retrieveConnectedPeripherals(withServices: [HeartRateMonitor.heartRate]) == [peripheral])

        monitor.centralManager.cancelPeripheralConnection(peripheral)
        let ended = await monitor.log.wait { $0.contains(.disconnected(TestScenario.strap, error: nil)) }
        #expect(ended.contains(.disconnected(TestScenario.strap, error: nil)), "\(ended.suffix(5))")
        #expect(peripheral.state == .disconnected)
        #expect(try await gateway.get("/v1/kept-connections").array.isEmpty)
        #expect(try await gateway.get("/v1/devices/\(TestScenario.strap)").object["connected"] as? Bool == false)
        await gateway.stop()
    }

    @Test func theAsyncConveniences() async throws {
        let gateway = try await GatewayUnderTest.start()
        let central = CBCentralManager(
            delegate: nil, queue: DispatchQueue(label: "async"), options: [CBManagerOptionGatewayURLKey: gateway.baseURL])
        defer { central.invalidate() }
        try await central.poweredOn()
        var found: CBDiscovery?
        for try await discovery in try await central.discoveries(withServices: [HeartRateMonitor.heartRate]) {
            found = discovery
            break
        }
        let strap = try #require(found)
        #expect(strap.peripheral.address == TestScenario.strap)
        #expect(strap.advertisementData[CBAdvertisementDataLocalNameKey] as? String == "Strap 3E01")
        try await central.connect(to: strap.peripheral)
        #expect(strap.peripheral.state == .connected)
        let characteristics = try await strap.peripheral.discoverAll().flatMap { $0.characteristics ?? [] }
        let location = try #require(characteristics.first { $0.uuid == HeartRateMonitor.location })
        let control = try #require(characteristics.first { $0.uuid == HeartRateMonitor.controlPoint })
        let measurement = try #require(characteristics.first { $0.uuid == HeartRateMonitor.measurement })
        #expect(try await strap.peripheral.value(of: location) == Data([0x01]))
        try await strap.peripheral.write(Data([0x01]), to: control)
        await #expect(throws: CBATTError(.applicationError)) { try await strap.peripheral.write(Data([0x02]), to: control) }
        var beats = 0
        for try await value in try await strap.peripheral.notifications(of: measurement) where value.count >= 2 {
            beats += 1
            if beats == 3 { break }
        }
        #expect(beats == 3)
        try await central.disconnect(strap.peripheral)
        #expect(strap.peripheral.state == .disconnected)
        #expect(try await gateway.get("/v1/kept-connections").array.isEmpty)
        await gateway.stop()
    }

    @Test func theSameDeviceHasTheSameIdentifierInEveryManager() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap)
        let options: [String: Any] = [CBManagerOptionGatewayURLKey: gateway.baseURL]
        let first = CBCentralManager(delegate: nil, queue: DispatchQueue(label: "first"), options: options)
        let second = CBCentralManager(delegate: nil, queue: DispatchQueue(label: "second"), options: options)
        defer {
            first.invalidate()
            second.invalidate()
        }
        try await first.poweredOn()
        try await second.poweredOn()
        let identifier = first.peripheral(address: TestScenario.strap).identifier
        #expect(second.retrievePeripherals(withIdentifiers: [identifier]).map(\.address) == [TestScenario.strap])
        #expect(first.peripheral(address: TestScenario.slow).identifier != identifier)
        await gateway.stop()
    }

    @Test func aWrongAPIKeyIsUnauthorizedAndAnAbsentGatewayUnknown() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--api-key", "right"])
        let wrong = CBCentralManager(
            delegate: nil, queue: DispatchQueue(label: "wrong"),
            options: [CBManagerOptionGatewayURLKey: gateway.baseURL, CBManagerOptionGatewayAPIKeyKey: "wrong"])
        defer { wrong.invalidate() }
        await #expect(throws: CBError.self) { try await wrong.poweredOn() }
        #expect(wrong.state == .unauthorized)
        let right = CBCentralManager(
            delegate: nil, queue: DispatchQueue(label: "right"),
            options: [CBManagerOptionGatewayURLKey: gateway.baseURL, CBManagerOptionGatewayAPIKeyKey: "right"])
        defer { right.invalidate() }
        try await right.poweredOn()
        await gateway.stop()

        let absent = CBCentralManager(
            delegate: nil, queue: DispatchQueue(label: "absent"), options: [CBManagerOptionGatewayURLKey: gateway.baseURL])
        defer { absent.invalidate() }
        await #expect(throws: CBError.self) { try await absent.poweredOn() }
        #expect(absent.state == .unknown)
        #expect(absent.lastGatewayError?.status == nil)
    }

    @Test func apisWithoutACounterpartSayUnsupported() async throws {
        let central = CBCentralManager(delegate: nil, queue: DispatchQueue(label: "unsupported"), options: [:])
        defer { central.invalidate() }
        #expect(throws: CBError(.operationNotSupported)) { try central.registerForConnectionEvents() }
    }
}
