@testable import BlueZ
import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite(.serialized) struct ConnectionTests {
    @Test func connectResolvesServicesAndDisconnectEndsIt() async throws {
        let harness = try await Harness()
        let events = harness.central.events()
        try await harness.discover(Harness.strap)
        let device = try await harness.central.connect(Harness.strap, timeout: .seconds(10))
        #expect(device.connected && device.servicesResolved)
        let services = try harness.central.services(of: Harness.strap)
        #expect(services.map(\.uuid).contains(Harness.heartRate))
        let only = try harness.central.services(of: Harness.strap, serviceUUIDs: [Harness.heartRate])
        #expect(only.map(\.uuid) == [Harness.heartRate])
        #expect(only.first?.characteristics.map(\.uuid).contains(Harness.measurement) == true)
        #expect(only.first?.characteristics.allSatisfy { $0.mtu != nil && $0.handle != nil } == true)
        #expect(harness.central.devices(connected: true).map(\.address) == [Harness.strap])

        // Already connected: no Connect() is sent.
        let before = harness.connection.statistics.messagesSent
        try await harness.central.connect(Harness.strap)
        #expect(harness.connection.statistics.messagesSent == before)

        try await harness.central.disconnect(Harness.strap)
        #expect(try harness.central.device(Harness.strap).connected == false)
        #expect { try harness.central.services(of: Harness.strap) } throws: { ($0 as? BlueZError)?.code == .notConnected }
        let seen = await collect(events, for: .milliseconds(100))
        #expect(seen.contains { if case .connected(let d) = $0 { d.address == Harness.strap } else { false } })
        #expect(seen.contains { if case .servicesResolved(let d) = $0 { d.address == Harness.strap } else { false } })
        #expect(seen.contains { if case .disconnected(let d, _) = $0 { d.address == Harness.strap } else { false } })
        await harness.shutdown()
    }

    @Test func connectsWhenBluetoothdNeverSignalsConnected() async throws {
        let harness = try await Harness(options: SimulatorOptions(connectedSignal: .never, temporaryTimeout: 300))
        try await harness.discover(Harness.strap)
        let device = try await harness.central.connect(Harness.strap, timeout: .seconds(10))
        #expect(device.connected && device.servicesResolved)
        #expect(try await harness.central.read(.uuid(Harness.sensorLocation), of: Harness.strap) == [0x01])
        await harness.shutdown()
    }

    @Test func timeoutCancelsTheAttemptWithDisconnect() async throws {
        let harness = try await Harness()
        try await harness.discover(Harness.beacon)
        // The beacon is not connectable: bluetoothd would try for a long
        // while (20 s x timing); the caller's deadline comes first.
        let start = ContinuousClock.now
        await #expect {
            try await harness.central.connect(Harness.beacon, timeout: .milliseconds(200))
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        #expect(ContinuousClock.now - start < .seconds(5))
        // The attempt was cancelled in bluetoothd, so the next one is
        // accepted (not "Operation already in progress").
        await #expect {
            try await harness.central.connect(Harness.beacon, timeout: .milliseconds(200))
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        await harness.shutdown()
    }

    @Test func deviceRemovedWhileConnecting() async throws {
        // Real time: the connection takes 0.3 s and services 2 s.
        let harness = try await Harness(timing: 1)
        try await harness.discover(Harness.strap)
        let path = try harness.central.device(Harness.strap).path
        let adapterPath = try harness.central.adapter().path
        let connecting = Task { try await harness.central.connect(Harness.strap, timeout: .seconds(20)) }
        try await Task.sleep(for: .milliseconds(600))
        _ = try await harness.otherClientCall(adapterPath, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(path)])
        await #expect {
            try await connecting.value
        } throws: { error in
            let code = (error as? BlueZError)?.code
            return code == .notFound || code == .connectionFailed
        }
        await harness.shutdown()
    }

    @Test func cancellingAConnectCleansUp() async throws {
        let harness = try await Harness()
        try await harness.discover(Harness.beacon)
        let attempt = Task { try await harness.central.connect(Harness.beacon, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        attempt.cancel()
        await #expect { try await attempt.value } throws: { ($0 as? BlueZError)?.code == .cancelled }
        // The lane is free and bluetoothd's attempt is gone.
        await #expect {
            try await harness.central.connect(Harness.beacon, timeout: .milliseconds(200))
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        await harness.shutdown()
    }

    @Test func connectFindsADeviceBluetoothdHasNotHeardYet() async throws {
        let harness = try await Harness()
        #expect(throws: BlueZError.self) { try harness.central.device(Harness.strap) }
        let device = try await harness.central.connect(Harness.strap, timeout: .seconds(20))
        #expect(device.address == Harness.strap && device.connected && device.servicesResolved)
        #expect(try harness.central.services(of: Harness.strap).map(\.uuid).contains(Harness.heartRate))
        // The discovery it ran ends with it.
        #expect(await eventually(within: .seconds(20)) { (try? harness.central.adapter())?.discovering == false })
        await harness.shutdown()
    }

    @Test func connectToAnAddressNeverHeardTimesOutAndStopsLooking() async throws {
        let harness = try await Harness()
        let nowhere = try #require(BluetoothAddress("12:34:56:78:9A:BC"))
        // A scan of another client's keeps running through it.
        let session = try await harness.central.scan(filter: DiscoveryFilter())
        let watcher = Task { for await _ in session {} }
        #expect(await eventually(within: .seconds(20)) { (try? harness.central.adapter())?.discovering == true })
        await #expect {
            try await harness.central.connect(nowhere, timeout: .milliseconds(500))
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        #expect((try? harness.central.adapter())?.discovering == true)
        watcher.cancel()
        #expect(await eventually(within: .seconds(20)) { (try? harness.central.adapter())?.discovering == false })
        // Alone, it stops the discovery it started.
        await #expect {
            try await harness.central.connect(nowhere, timeout: .milliseconds(300))
        } throws: { ($0 as? BlueZError)?.code == .timeout }
        #expect(await eventually(within: .seconds(20)) { (try? harness.central.adapter())?.discovering == false })
        await harness.shutdown()
    }
}
