import Foundation
import Synchronization
import Testing

/// A kept device is known to the gateway: `GET /v1/devices/{address}`
/// never says it does not exist, while bluetoothd restarts or while it
/// does not list the device.
@Suite struct KeptDeviceTests {
    @Test(.timeLimit(.minutes(3))) func aKeptDeviceIsNeverNotFoundWhileBluetoothdRestarts() async throws {
        let gateway = try await GatewayUnderTest.start()
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("PUT", device + "/keep").status == 201)
        try await waitUntilConnected(gateway, device)

        let statuses = Mutex<[Int]>([])
        let polling = Task {
            while !Task.isCancelled {
                guard let answer = try? await gateway.get(device) else { continue }
                statuses.withLock { $0.append(answer.status) }
            }
        }
        try await gateway.simulator.stopBluetoothd()
        try await waitFor(gateway, "/health") { $0.status == 503 }
        try await waitFor(gateway, device) { $0.status == 503 }
        try await gateway.simulator.startBluetoothd()
        try await waitUntilConnected(gateway, device)
        polling.cancel()
        _ = await polling.result
        // The poller samples what it can; the waits above saw the 503.
        let seen = statuses.withLock { $0 }
        #expect(!seen.isEmpty && !seen.contains(404), "\(seen)")
        #expect(try await gateway.get(device).status == 200)
        #expect(await gateway.stop() == 0)
    }

    @Test func aKeptDeviceBluetoothdDoesNotListIsAnsweredFromWhatTheGatewayKnows() async throws {
        let gateway = try await GatewayUnderTest.start()
        let absent = "/v1/devices/AA:00:00:00:00:0C"
        #expect(try await gateway.get(absent).status == 404, "not kept: unknown")
        #expect(try await gateway.request("PUT", absent + "/keep").status == 201)
        let known = try await gateway.get(absent)
        #expect(known.status == 200, "\(known)")
        #expect(known.object["address"] as? String == "AA:00:00:00:00:0C")
        #expect(known.object["connected"] as? Bool == false)
        let problems = try await SpecValidator.problems([("Device", known.text)])
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(await gateway.stop() == 0)
    }

    private func waitUntilConnected(_ gateway: GatewayUnderTest, _ device: String) async throws {
        try await waitFor(gateway, device + "/keep") { $0.object["status"] as? String == "connected" }
    }

    private func waitFor(
        _ gateway: GatewayUnderTest, _ path: String, _ condition: (HTTPAnswer) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition(try await gateway.get(path)) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw GatewayTestError("\(path) did not reach the expected state in 60 s")
    }
}
