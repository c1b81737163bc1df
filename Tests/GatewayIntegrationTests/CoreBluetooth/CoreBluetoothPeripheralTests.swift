import BlueZSimulator
import Foundation
import GatewayCoreBluetooth
import Testing
import TestSupport

/// Core Bluetooth's peripheral API over the real gateway: the simulator's
/// remote central reads, writes and subscribes.
@Suite struct CoreBluetoothPeripheralTests {
    @Test func theSeedsPeripheralFlow() async throws {
        let gateway = try await GatewayUnderTest.start()
        let queue = CallbackQueue("peripheral-flow")
        let thermometer = Thermometer(gateway: gateway.baseURL, queue: queue)
        defer { thermometer.peripheralManager.invalidate() }
        let published = await thermometer.log.wait { $0.contains(.advertising(error: nil)) }
        #expect(published.prefix(3) == [.state(.poweredOn), .added("180D", error: nil), .advertising(error: nil)], "\(published)")
        #expect(thermometer.peripheralManager.isAdvertising)
        let advertisements = await gateway.simulator.registeredAdvertisements()
        #expect(advertisements.count == 1)
        let localName = advertisements.first?.properties["LocalName"].map { "\($0)" } ?? ""
        #expect(localName.contains("Thermo"), "\(localName)")

        // A value published with the service is answered by the gateway.
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: GATTUUID("2a38")!) == [0x01])
        // One without goes to didReceiveRead and respond(to:withResult:).
        #expect(try await gateway.simulator.centralRead(adapter: "hci0", characteristic: GATTUUID("ff01")!) == [0xca, 0xfe])
        #expect(thermometer.log.all.contains(.read("FF01", offset: 0)))
        try await gateway.simulator.centralWrite([0x07], adapter: "hci0", characteristic: GATTUUID("ff01")!)
        #expect(thermometer.log.all.contains(.write("FF01", Data([0x07]))))
        await #expect(throws: CentralATTError(code: 0x03)) {
            try await gateway.simulator.centralWrite([0x00], adapter: "hci0", characteristic: GATTUUID("ff01")!)
        }

        // A subscription, then updates until the transmit queue is full,
        // then the manager says it is ready again; the central got them all.
        try await gateway.simulator.centralSubscribe(adapter: "hci0", characteristic: GATTUUID("2a37")!)
        let subscribed = await thermometer.log.wait { $0.contains(where: \.isSubscribed) }
        #expect(subscribed.contains(.subscribed("2A37", central: "11:22:33:44:55:66")), "\(subscribed)")
        #expect(thermometer.measurement.isNotifying)
        var sent: [UInt8] = []
        for beat in UInt8(60)...UInt8(160) {
            guard thermometer.peripheralManager.updateValue(Data([0x00, beat]), for: thermometer.measurement, onSubscribedCentrals: nil)
            else { break }
            sent.append(beat)
        }
        // At least a queue's worth goes (more if one was sent meanwhile).
        #expect(sent.count >= CBPeripheralManager.transmitQueueLength && sent.count < 101, "updateValue says false once its queue is full")
        #expect(await thermometer.log.wait { $0.contains(.ready) }.contains(.ready))
        let received = try await eventually(within: .seconds(30)) {
            try await gateway.simulator.centralReceived(adapter: "hci0", characteristic: GATTUUID("2a37")!).count >= sent.count
        }
        #expect(received)
        #expect(try await gateway.simulator.centralReceived(adapter: "hci0", characteristic: GATTUUID("2a37")!) == sent.map { [0x00, $0] })
        try await gateway.simulator.centralUnsubscribe(adapter: "hci0", characteristic: GATTUUID("2a37")!)
        #expect(await thermometer.log.wait { $0.contains(.unsubscribed("2A37")) }.contains(.unsubscribed("2A37")))
        #expect(!thermometer.log.all.contains(.wrongQueue))

        thermometer.peripheralManager.stopAdvertising()
        thermometer.peripheralManager.removeAllServices()
        #expect(await eventually(within: .seconds(30)) { await gateway.simulator.registeredApplications().isEmpty })
        #expect(await eventually(within: .seconds(30)) { await gateway.simulator.registeredAdvertisements().isEmpty })
        await gateway.stop()
    }
}
