import Foundation
import Testing

@testable import MQTTBridge

/// The fleet as `/v1/fleet/…` shows it, from the messages a gateway saw.
struct FleetDirectoryTests {
    static let device = "C4:7C:8D:6A:3E:01"

    @Test func hearingsAreMergedPerDeviceWithAMovingAverage() {
        var directory = FleetDirectory(presenceFreshness: .seconds(60))
        let now = Date()
        directory.setStatus("a", online: true)
        directory.setStatus("b", online: true)
        directory.setPresence("a", device: Self.device, adapter: "hci0", rssi: -60, at: now)
        directory.setPresence("a", device: Self.device, adapter: "hci0", rssi: -80, at: now)
        directory.setPresence("b", device: Self.device, adapter: "hci1", rssi: -62, at: now)
        let device = directory.devices(now: now).first
        #expect(device?.address == Self.device)
        // -60, then -80 weighing 1/4: -65, which ranks below b's -62.
        #expect(device?.heardBy.map(\.gateway) == ["b", "a"])
        #expect(device?.heardBy.last?.rssiAverage == -65)
        #expect(device?.heardBy.last?.rssi == -80)
        #expect(device?.heardBy.first?.adapter == "hci1")
        // Stale after the freshness, gone once cleared.
        #expect(directory.devices(now: now + 61).first?.heardBy.allSatisfy { !$0.fresh } == true)
        directory.setPresence("a", device: Self.device, adapter: nil, rssi: nil, at: now)
        directory.setPresence("b", device: Self.device, adapter: nil, rssi: nil, at: now)
        #expect(directory.devices(now: now).isEmpty)
    }

    @Test func aMessageSpeaksForTheTimeItCarries() throws {
        let event = Bridge.object(Array(#"{"type":"device-connected","timestamp":"2026-11-21T10:00:00.120Z"}"#.utf8))
        let presence = Bridge.object(Array(#"{"rssi":-50,"timestamp":"2026-11-21T10:00:01Z"}"#.utf8))
        #expect(abs(Bridge.timestamp(of: event).timeIntervalSince1970 - 1_795_255_200.12) < 0.001)
        #expect(abs(Bridge.timestamp(of: presence).timeIntervalSince1970 - 1_795_255_201) < 0.001)
        let none = Bridge.timestamp(of: Bridge.object([]))
        #expect(abs(none.timeIntervalSinceNow) < 60)
    }

    @Test func gatewaysCountWhatTheyHearConnectAndKeep() {
        var directory = FleetDirectory(presenceFreshness: .seconds(60))
        let now = Date()
        directory.setStatus("a", online: true)
        directory.setStatus("b", online: false)
        directory.seen("b", at: now - 5)
        directory.seen("b", at: now - 10)
        directory.setPresence("a", device: Self.device, adapter: "hci0", rssi: -60, at: now)
        directory.setConnected("b", device: Self.device, true)
        directory.setKept("b", device: Self.device, .init(adapter: "hci0", status: "connected"))
        let gateways = directory.gateways(me: "a", now: now)
        #expect(gateways.map(\.id) == ["a", "b"])
        #expect(gateways.map(\.online) == [true, false])
        #expect(gateways.map(\.isSelf) == [true, false])
        #expect(gateways.map(\.devicesHeard) == [1, 0])
        #expect(gateways.map(\.devicesConnected) == [0, 1])
        #expect(gateways.map(\.devicesKept) == [0, 1])
        // The latest time a gateway spoke counts, whatever the order.
        #expect(gateways.last?.lastSeen == now - 5)
        let device = directory.devices(now: now).first
        #expect(device?.connectedOn == ["b"])
        #expect(device?.keptBy.map(\.status) == ["connected"])
        directory.setKept("b", device: Self.device, nil)
        #expect(directory.devices(now: now).first?.keptBy.isEmpty == true)
    }
}
