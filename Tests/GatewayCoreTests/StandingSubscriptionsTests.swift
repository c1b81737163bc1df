#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import GatewayCore
import PersistedState
import Testing

/// The core holding standing subscriptions on the simulator: waiting while
/// the device is away, subscribed while it is connected, again after a
/// reconnection, until removed.
@Suite struct StandingSubscriptionsTests {
    func relay(id: Int64, adapter: String = "hci0", characteristic: String = CoreHarness.relay) -> StandingSubscription {
        StandingSubscription(
            id: id, adapter: adapter, address: CoreHarness.plug, characteristic: .uuid(characteristic), mode: .notify,
            created: Date(), owner: "alice")
    }

    /// Waits (20 ms a look, 10 s at most) for subscription `id`'s status.
    func status(
        _ wanted: StandingSubscriptions.Entry.Status, of id: Int64, in standing: StandingSubscriptions
    ) async throws -> Bool {
        for _ in 0..<500 where standing.entry(id)?.status != wanted { try await Task.sleep(for: .milliseconds(20)) }
        return standing.entry(id)?.status == wanted
    }

    @Test func aSubscriptionIsHeldWhileItsDeviceIsConnectedAndTakenAgainAfterAReconnection() async throws {
        try await withCoreHarness { harness in
            let standing = harness.core.standing
            standing.start(relay(id: 1))
            #expect(standing.entry(1)?.status == .waiting)
            #expect(standing.entry(identicalTo: relay(id: 99))?.subscription.id == 1)
            #expect(standing.entry(identicalTo: relay(id: 99, adapter: "hci1")) == nil)

            let device = try await harness.connected(CoreHarness.plug)
            #expect(try await status(.active, of: 1, in: standing))

            _ = try await harness.core.disconnect(DisconnectCommand(device: device, timeout: .seconds(10)))
            #expect(try await status(.waiting, of: 1, in: standing))
            _ = try await harness.core.connect(ConnectCommand(device: device, timeout: .seconds(20)))
            #expect(try await status(.active, of: 1, in: standing))

            #expect(standing.remove(1))
            #expect(standing.entry(1) == nil && standing.entries.isEmpty)
            #expect(!standing.remove(1))
        }
    }

    @Test func aCharacteristicThatCannotNotifyWaitsWithBlueZsReason() async throws {
        try await withCoreHarness { harness in
            let standing = harness.core.standing
            _ = try await harness.connected(CoreHarness.plug)
            // The schedule can be read and written, not notified.
            standing.start(relay(id: 2, characteristic: "0000ff03-0000-1000-8000-00805f9b34fb"))
            for _ in 0..<500 where standing.entry(2)?.lastReason == nil { try await Task.sleep(for: .milliseconds(20)) }
            #expect(standing.entry(2)?.status == .waiting)
            #expect(standing.entry(2)?.lastReason == BlueZError.Code.notSupported.rawValue)
            // What the store gave back that is not a UUID is never subscribed.
            standing.start(relay(id: 3, characteristic: "pump"))
            for _ in 0..<500 where standing.entry(3)?.lastReason == nil { try await Task.sleep(for: .milliseconds(20)) }
            #expect(standing.entry(3)?.lastReason == "the stored subscription cannot be read")
            standing.stop()
            // Stopped: nothing more is started.
            standing.start(relay(id: 4))
            #expect(standing.entry(4) == nil)
        }
    }
}
