import BlueZ
import GatewayCore
import Testing

/// The keeper's steps, published by the core once it is started.
@Suite struct KeeperEventTests {
    @Test func aKeptDeviceConnectingIsPublishedAndAnnounced() async throws {
        let recorded = RecordedEvents()
        try await withCoreHarness(events: recorded) { harness in
            harness.core.start()
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            _ = try await harness.core.keep(
                KeepCommand(device: plug, placement: .thisGateway(maxAttempts: nil, label: nil)), owner: "alice")
            for _ in 0..<500 where recorded.keeping.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            let first = try #require(recorded.keeping.first)
            guard case .connected(let adapter, let address, _) = first.step else { throw CoreHarnessError("\(first)") }
            #expect(adapter == "hci0" && address == plug.address)
            #expect(first.announced)
        }
    }
}
