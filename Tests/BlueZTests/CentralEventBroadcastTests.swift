import Foundation
import Synchronization
import Testing

@testable import BlueZ

/// The central's two broadcasts: a value or an advertisement reaches the
/// consumers that take every event and never visits the link consumers'
/// filters; a link event reaches both kinds.
@Suite struct CentralEventBroadcastTests {
    @Test func valuesReachOnlyWhoTakesEverythingAndLinksReachBoth() throws {
        let helper = CentralEventFilterTests()
        let strap = try helper.device("F1:E2:D3:C4:B5:A6"), other = try helper.device("C4:7C:8D:6A:3E:01")
        let value = CharacteristicValue(
            adapter: "hci0", device: strap.address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2A37),
            handle: nil, value: [0x00, 0x48], timestamp: Date())
        let broadcast = CentralEventBroadcast()
        let everything = Mutex<[CentralEvent]>([]), strapLinks = Mutex<[CentralEvent]>([])
        let all = try #require(broadcast.addHandler(.all) { event in everything.withLock { $0.append(event) } })
        let link = try #require(
            broadcast.addHandler(.link(of: strap.address, adapter: "hci0")) { event in strapLinks.withLock { $0.append(event) } })
        #expect(broadcast.subscriberCount == 2 && broadcast.unfilteredSubscriberCount == 1)

        for event: CentralEvent in [.characteristicValue(value), .deviceUpdated(strap), .connected(strap), .connected(other)] {
            broadcast.yield(event)
        }
        #expect(everything.withLock { $0.count } == 4)
        #expect(strapLinks.withLock { $0 } == [.connected(strap)])

        // Handler ids are the broadcast's own: removing one removes that one.
        broadcast.removeHandler(link)
        broadcast.yield(.disconnected(strap, reason: nil))
        #expect(strapLinks.withLock { $0.count } == 1 && everything.withLock { $0.count } == 5)
        broadcast.removeHandler(all)
        #expect(broadcast.subscriberCount == 0)
        broadcast.finish()
        #expect(broadcast.addHandler(.all) { _ in } == nil)
    }
}
