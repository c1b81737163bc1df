import DBus
import Foundation
import Testing

@testable import BlueZ

/// A discovery session's own filtering: address prefixes, service data,
/// the minimum interval between updates, presence and RSSI smoothing.
@Suite struct ScanSessionTests {
    func device(_ text: String, rssi: Int16 = -60, heard: Date? = Date()) throws -> Device {
        let address = try BluetoothAddress(parsing: text)
        var device = Device(
            path: try ObjectPath("/org/bluez/hci0/dev_" + address.description.replacing(":", with: "_")),
            adapter: "hci0", address: address)
        device.advertisement.rssi = rssi
        device.lastSeen = heard
        return device
    }

    func session(
        _ filter: DiscoveryFilter, buffering: AsyncStream<DiscoveryEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> (SessionRecord, AsyncStream<DiscoveryEvent>) {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: buffering)
        return (SessionRecord(adapterPath: "/org/bluez/hci0", filter: filter, continuation: continuation), stream)
    }

    func events(_ session: SessionRecord, _ stream: AsyncStream<DiscoveryEvent>) async -> [DiscoveryEvent] {
        session.continuation.finish()
        var events: [DiscoveryEvent] = []
        for await event in stream { events.append(event) }
        return events
    }

    @Test func addressPrefixAndServiceData() throws {
        var filter = DiscoveryFilter()
        filter.addressPrefix = "C47C"
        #expect(filter.matches(try device("C4:7C:8D:6A:3E:01")))
        #expect(!filter.matches(try device("C4:7D:8D:6A:3E:01")))
        filter = DiscoveryFilter()
        filter.serviceDataUUIDs = [BluetoothUUID(uuid16: 0xFCD2)]
        var sensor = try device("A4:C1:38:8E:2F:55")
        #expect(!filter.matches(sensor))
        // Listing the UUID is not enough: the service data must be there.
        sensor.advertisement.serviceUUIDs = [BluetoothUUID(uuid16: 0xFCD2)]
        #expect(!filter.matches(sensor))
        sensor.advertisement.serviceData[BluetoothUUID(uuid16: 0xFCD2)] = [0x40]
        #expect(filter.matches(sensor))
    }

    @Test func updatesComeNoMoreOftenThanTheMinimumInterval() async throws {
        var filter = DiscoveryFilter(allowDuplicates: true)
        filter.minimumUpdateInterval = .seconds(1)
        var (record, stream) = session(filter)
        let start = ContinuousClock.now
        let beacon = try device("F1:E2:D3:C4:B5:A6")
        record.offer(beacon, now: start)
        record.offer(beacon, now: start + .milliseconds(400))
        record.offer(beacon, now: start + .milliseconds(999))
        record.offer(beacon, now: start + .milliseconds(1000))
        record.offer(beacon, now: start + .milliseconds(1500))
        let events = await self.events(record, stream)
        #expect(events == [.discovered(beacon), .updated(beacon)])
    }

    @Test func aSilentDeviceIsLostAndFoundAgainWhenHeard() async throws {
        var filter = DiscoveryFilter()
        filter.presenceTimeout = .seconds(5)
        var (record, stream) = session(filter)
        let now = Date()
        let heard = try device("F1:E2:D3:C4:B5:A6", heard: now)
        record.offer(heard)
        var tree = ObjectTree()
        tree.devices[heard.path] = heard
        record.sweepSilent(in: tree, now: now + 4)
        #expect(record.reported[heard.path] != nil)
        record.sweepSilent(in: tree, now: now + 6)
        #expect(record.reported[heard.path] == nil)
        // A report of the same old sighting does not bring it back ...
        record.offer(heard, date: now + 6)
        // ... a new one does.
        var again = heard
        again.lastSeen = now + 6
        record.offer(again, date: now + 6)
        let events = await self.events(record, stream)
        #expect(events == [.discovered(heard), .silent(heard), .discovered(again)])
    }

    @Test func smoothedRSSIFollowsTheReports() async throws {
        var filter = DiscoveryFilter(allowDuplicates: true)
        filter.rssiSmoothing = 0.5
        var (record, stream) = session(filter)
        for rssi: Int16 in [-60, -70, -80] { record.offer(try device("F1:E2:D3:C4:B5:A6", rssi: rssi)) }
        let events = await self.events(record, stream)
        let smoothed = events.compactMap { event -> Double? in
            switch event {
            case .discovered(let device), .updated(let device): device.smoothedRSSI
            default: nil
            }
        }
        #expect(smoothed == [-60, -65, -72.5])
    }

    @Test func aDeviceWhoseFirstReportTheConsumerMissedIsDiscoveredAgain() async throws {
        // A consumer two events behind: the oldest report is dropped.
        var (record, stream) = session(DiscoveryFilter(allowDuplicates: true), buffering: .bufferingNewest(2))
        let first = try device("F1:E2:D3:C4:B5:01"), second = try device("F1:E2:D3:C4:B5:02")
        let third = try device("F1:E2:D3:C4:B5:03")
        record.offer(first)
        record.offer(second)
        record.offer(third)  // drops first's .discovered
        #expect(record.reported[first.path] == nil)
        var seen: [DiscoveryEvent] = []
        var iterator = stream.makeAsyncIterator()
        for _ in 0..<2 { if let event = await iterator.next() { seen.append(event) } }
        record.offer(first)
        record.offer(second)
        record.continuation.finish()
        while let event = await iterator.next() { seen.append(event) }
        #expect(seen == [.discovered(second), .discovered(third), .discovered(first), .updated(second)])
    }
}
