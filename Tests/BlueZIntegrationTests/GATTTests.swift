@testable import BlueZ
import BlueZSimulator
import DBus
import Testing

@Suite(.serialized) struct GATTTests {
    @Test func readWriteAndErrors() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        #expect(try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) == [0x01])
        #expect(try await central.read(.uuid(Harness.sensorLocation, service: Harness.heartRate), of: Harness.strap) == [0x01])
        try await central.write([0x01], to: .uuid(Harness.controlPoint), of: Harness.strap)
        await #expect {
            try await central.write([0x02], to: .uuid(Harness.controlPoint), of: Harness.strap)
        } throws: { error in
            guard let error = error as? BlueZError else { return false }
            return error.code == .peripheralFailed && error.attError == 0x80 && error.dbusName == "org.bluez.Error.Failed"
        }
        let characteristic = try central.characteristic(.uuid(Harness.controlPoint), of: Harness.strap)
        let limit = Int(characteristic.mtu ?? 23) - 3
        await #expect {
            try await central.write(Array(repeating: 0, count: limit + 1), to: .uuid(Harness.controlPoint), of: Harness.strap, type: .command)
        } throws: { ($0 as? BlueZError)?.code == .invalidArguments }
        await #expect {
            try await central.read(.uuid(BluetoothUUID(uuid16: 0x2a00)), of: Harness.strap)
        } throws: { ($0 as? BlueZError)?.code == .notFound }
        await harness.shutdown()
    }

    @Test func oneDBusCallPerRead() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        // Let the connection settle (service resolution signals, ticks).
        try await Task.sleep(for: .milliseconds(200))
        let before = harness.connection.statistics.messagesSent
        for _ in 0..<10 {
            _ = try await harness.central.read(.uuid(Harness.sensorLocation), of: Harness.strap)
        }
        let sent = harness.connection.statistics.messagesSent - before
        #expect(sent == 10, "D-Bus messages sent for 10 reads: \(sent)")
        await harness.shutdown()
    }

    @Test func concurrentClientsNeverSeeInProgress() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    if index % 2 == 0 {
                        #expect(try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) == [0x01])
                    } else {
                        try await central.write([0x01], to: .uuid(Harness.controlPoint), of: Harness.strap)
                    }
                }
            }
            try await group.waitForAll()
        }
        await harness.shutdown()
    }

    @Test func ambiguousUUIDListsTheCandidates() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        // 2a19 (Battery Level) exists once on the strap; 2a29 once: use a
        // device with a UUID in two services if the scenario has one.
        let services = try harness.central.services(of: Harness.strap)
        var counts: [BluetoothUUID: Int] = [:]
        for service in services { for characteristic in service.characteristics { counts[characteristic.uuid, default: 0] += 1 } }
        if let shared = counts.first(where: { $0.value > 1 })?.key {
            #expect {
                try harness.central.characteristic(.uuid(shared), of: Harness.strap)
            } throws: { ($0 as? BlueZError)?.code == .ambiguous && (($0 as? BlueZError)?.candidates.count ?? 0) > 1 }
        }
        let byHandle = try #require(services.first?.characteristics.first)
        #expect(try harness.central.characteristic(.handle(byHandle.handle ?? 0), of: Harness.strap).path == byHandle.path)
        await harness.shutdown()
    }
}
