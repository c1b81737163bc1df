import Foundation
import Testing
import TestSupport

/// `--mqtt-presence passive`: the fleet's presence flows from the gateway's
/// own passive scan, with no client scanning, on a real mosquitto.
@Suite(.serialized) struct MQTTPassivePresenceTests {
    static let strap = TestScenario.strap

    @Test func presenceIsPublishedWithoutAnyScanFromAMonitor() async throws {
        let broker = try await Broker.start()
        let watcher = try await broker.mosquittoSub("blegateway/+/devices/+/presence", id: "watcher", format: "%t %p")
        let gateway = try await GatewayUnderTest.start(
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-passive", "--mqtt-presence", "passive"],
            experimental: true)
        #expect(
            await watcher.waitForOutput(
                containing: "blegateway/g-passive/devices/\(Self.strap)/presence {\"gateway\":\"g-passive\"",
                timeout: .seconds(30)),
            "no presence: \(watcher.standardOutput.suffix(2000))")
        // Heard through the advertisement monitor: bluetoothd is not discovering.
        #expect(try await gateway.get("/v1/adapters/hci0").object["discovering"] as? Bool == false)
        await gateway.stop()
        watcher.kill()
    }

    @Test func withoutPassivePresenceNothingIsPublishedUntilAClientScans() async throws {
        let broker = try await Broker.start()
        let watcher = try await broker.mosquittoSub("blegateway/+/devices/+/presence", id: "watcher", format: "%t %p")
        let gateway = try await GatewayUnderTest.start(
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-scans"], experimental: true)
        try await Task.sleep(for: .seconds(2))
        #expect(!watcher.standardOutput.contains("/presence {"), "\(watcher.standardOutput.suffix(500))")
        let scan = try gateway.stream("/v1/scan")
        #expect(
            await watcher.waitForOutput(
                containing: "blegateway/g-scans/devices/\(Self.strap)/presence {", timeout: .seconds(30)))
        scan.close()
        await gateway.stop()
        watcher.kill()
    }

    @Test func anUnknownPresenceSourceIsRefusedAtStart() async throws {
        let result = try await run([GatewayUnderTest.executable, "serve", "--mqtt", "mqtt://127.0.0.1:1", "--mqtt-presence", "often"])
        #expect(result.status != 0)
        #expect(result.error.contains("--mqtt-presence is scans or passive"), "\(result.error)")
    }
}
