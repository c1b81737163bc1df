import BlueZ
import Foundation
import PersistedState
import Synchronization
import Testing

@testable import GatewayCore

/// The core's event log on the simulator: the central's events reach it
/// from the core's own handler, typed, and each is encoded once however
/// many subscribers ask for its bytes.
@Suite struct EventLogCoreTests {
    /// An encoding that counts what it encodes: `id type`.
    final class CountingEncoding: EventEncoding {
        let frames = Atomic<Int>(0)

        func frame(of event: LoggedEvent, id: UInt64, time: Date) -> [UInt8] {
            frames.add(1, ordering: .relaxed)
            return Array("\(id) \(event.type)".utf8)
        }

        func storedData(of event: LoggedEvent, time: Date) -> [UInt8] { Array(event.type.utf8) }
        func frame(of stored: StoredEvent) -> [UInt8] { stored.data }
        func gap(after position: UInt64, oldestAvailable: UInt64) -> [UInt8] { [] }
    }

    /// A subscriber that keeps the typed events and, if `encodes`, their bytes.
    final class Recorder: EventLogSubscriber {
        struct Received {
            let id: UInt64
            let event: LoggedEvent
            let bytes: [UInt8]?
        }

        let encodes: Bool
        let received = Mutex<[Received]>([])

        init(encodes: Bool) { self.encodes = encodes }

        var count: Int { received.withLock(\.count) }

        func receive(_ event: inout PublishedEvent<LoggedEvent>) {
            let bytes = encodes ? event.encoded() : nil
            received.withLock { $0.append(Received(id: event.id, event: event.event, bytes: bytes)) }
        }

        var values: [(id: UInt64, value: CharacteristicValue, bytes: [UInt8]?)] {
            received.withLock { received in
                received.compactMap { item in
                    guard case .central(.characteristicValue(let value)) = item.event else { return nil }
                    return (item.id, value, item.bytes)
                }
            }
        }
    }

    @Test func aReadValueReachesEverySubscriberTypedAndIsEncodedOnce() async throws {
        let encoding = CountingEncoding()
        let log = EventLog(capacity: 64, encoding: encoding)
        let typed = Recorder(encodes: false)
        let first = Recorder(encodes: true)
        let second = Recorder(encodes: true)
        let values = EventFilter(types: [LoggedEvent.characteristicValue])
        log.subscribe(typed, id: log.makeSubscriberID(), filter: values)
        log.subscribe(first, id: log.makeSubscriberID(), filter: values)
        log.subscribe(second, id: log.makeSubscriberID(), filter: values)
        try await withCoreHarness(log: log) { harness in
            harness.core.start()
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            let relay = try CharacteristicTarget(device: plug, parsing: CoreHarness.relay, service: nil)
            let read = try await harness.core.read(ReadCommand(characteristic: relay))
            for _ in 0..<500 where second.values.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            let value = try #require(typed.values.first)
            #expect(value.value.value == read)
            #expect(value.value.device == plug.address)
            #expect(value.bytes == nil)
            let one = try #require(first.values.first)
            let other = try #require(second.values.first)
            #expect(one.id == value.id && other.id == value.id)
            #expect(one.bytes == Array("\(value.id) characteristic-value".utf8))
            #expect(other.bytes == one.bytes)
            // One encoding per value, for both subscribers that asked.
            #expect(encoding.frames.load(ordering: .relaxed) == first.values.count)
        }
    }

    @Test func theCoreStopsFeedingTheLogWhenItStops() async throws {
        let log = EventLog(capacity: 64, encoding: CountingEncoding())
        let recorder = Recorder(encodes: false)
        log.subscribe(recorder, id: log.makeSubscriberID(), filter: EventFilter())
        try await withCoreHarness(log: log) { harness in
            harness.core.start()
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            for _ in 0..<500 where recorder.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(recorder.count > 0)
            harness.core.stop()
            let before = recorder.count
            // Disconnecting is a `device-disconnected` event the log no longer gets.
            try await harness.central.disconnect(plug.address, adapter: "hci0")
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorder.count == before)
        }
    }
}
