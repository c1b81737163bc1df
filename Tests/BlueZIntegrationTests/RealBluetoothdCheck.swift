import BlueZ
import DBus
import Glibc
import TestSupport
import Testing

/// A check of `Central` against the real bluetoothd in the bluez-vm rig,
/// not part of the normal run: it is enabled only when BLUEZ_REAL_BUS names
/// the guest's system bus (`run-e2e.sh --bus-port`; see
/// scripts/check-real-bluetoothd.sh). Prints what it saw.
@Suite struct RealBluetoothdCheck {
    static let busAddress: String? = {
        guard let value = getenv("BLUEZ_REAL_BUS") else { return nil }
        return String(cString: value)
    }()

    @Test(.enabled(if: busAddress != nil)) func discoverConnectReadNotifyWriteDisconnect() async throws {
        let bus = try await Connection.connect(to: .address(Self.busAddress ?? ""))
        let central = Central(connection: bus)
        try await central.start()
        let peripheral = address("00:AA:01:01:00:01")
        print("REAL adapters: \(central.adapters().map { "\($0.id) \($0.state)" })")
        let session = try await central.scan(adapter: "hci0", filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate]))
        let found = await firstEvent(of: session, within: .seconds(30)) { event in
            if case .discovered(let device) = event { return device.address == peripheral }
            return false
        }
        print("REAL discovered: \(String(describing: found))")
        #expect(found != nil)
        let device = try await central.connect(peripheral, adapter: "hci0", timeout: .seconds(40))
        print("REAL connected: connected=\(device.connected) resolved=\(device.servicesResolved)")
        let before = bus.statistics
        let location = try await central.read(.uuid(Harness.sensorLocation), of: peripheral, adapter: "hci0")
        let after = bus.statistics
        print("REAL read 2a38 = \(location); messages sent \(after.messagesSent - before.messagesSent)")
        #expect(location == [0x01])
        let subscription = try await central.subscribe(to: .uuid(Harness.measurement), of: peripheral, adapter: "hci0")
        let receivedBefore = bus.statistics.messagesReceived
        let values = await collect(subscription, for: .seconds(4))
        print("REAL notifications: \(values.count), messages received \(bus.statistics.messagesReceived - receivedBefore)")
        #expect(values.count >= 2)
        await #expect {
            try await central.write([0x02], to: .uuid(Harness.controlPoint), of: peripheral, adapter: "hci0")
        } throws: { error in
            print("REAL write 02: \(error)")
            return (error as? BlueZError)?.attError == 0x80
        }
        try await central.disconnect(peripheral, adapter: "hci0")
        print("REAL after disconnect: connected=\((try? central.device(peripheral, adapter: "hci0"))?.connected as Any)")
        await central.stop()
        bus.close()
    }
}
