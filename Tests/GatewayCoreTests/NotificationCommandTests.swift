import BlueZ
import GatewayCore
import Synchronization
import TestSupport
import Testing

/// Subscribing through the core into a sink (as an SSE stream does), on
/// the simulator.
@Suite struct NotificationCommandTests {
    /// What a sink received, in order.
    final class Received: Sendable {
        let values = Mutex<[[UInt8]]>([])
        let ends = Mutex(0)
        /// The values again, as they arrive, for a test to wait on.
        let arrivals: AsyncStream<[UInt8]>
        private let arrived: AsyncStream<[UInt8]>.Continuation

        init() {
            (arrivals, arrived) = AsyncStream.makeStream()
        }

        var sink: NotificationSink {
            NotificationSink(
                receive: { event in
                    guard case .value(let value) = event else { return }
                    self.values.withLock { $0.append(value.value) }
                    self.arrived.yield(value.value)
                },
                ended: { _ in self.ends.withLock { $0 += 1 } })
        }
    }

    @Test func aSinkReceivesTheValuesUntilItsLeaseIsCancelled() async throws {
        try await withCoreHarness { harness in
            let device = try await harness.connected(CoreHarness.plug)
            let relay = try CharacteristicTarget(device: device, parsing: CoreHarness.relay, service: nil)
            let received = Received()
            let lease = try await harness.core.subscribe(SubscribeCommand(characteristic: relay), sink: received.sink)
            #expect(lease.device == device.address)
            #expect(lease.adapter == "hci0")

            // The relay echoes what is written as a notification.
            try await harness.core.write(WriteCommand(characteristic: relay, value: [0x01]))
            #expect(await firstEvent(of: received.arrivals, within: .seconds(10)) { $0 == [0x01] } != nil)

            lease.cancel()
            try await harness.core.write(WriteCommand(characteristic: relay, value: [0x02]))
            // Read back: the write was done, and its echo would have come before.
            #expect(try await harness.core.read(ReadCommand(characteristic: relay)) == [0x02])
            try await Task.sleep(for: .milliseconds(200))
            #expect(!received.values.withLock { $0.contains([0x02]) })
            // Cancelled by its holder: not an end the sink is told of.
            #expect(received.ends.withLock { $0 } == 0)
        }
    }

    @Test func aCharacteristicThatCannotNotifyFailsBeforeAnyLease() async throws {
        try await withCoreHarness { harness in
            let device = try await harness.connected(CoreHarness.plug)
            let schedule = try CharacteristicTarget(
                device: device, parsing: "0000ff03-0000-1000-8000-00805f9b34fb", service: nil)
            let failure = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.subscribe(SubscribeCommand(characteristic: schedule), sink: Received().sink)
            }
            #expect(failure?.code == .notSupported, "\(String(describing: failure))")
        }
    }
}

