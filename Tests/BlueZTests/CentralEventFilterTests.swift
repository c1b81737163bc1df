import DBus
import Foundation
import Testing

@testable import BlueZ

/// What each `CentralEventFilter` lets through to its consumer.
@Suite struct CentralEventFilterTests {
    func device(_ text: String, adapter: String = "hci0") throws -> Device {
        let address = try BluetoothAddress(parsing: text)
        return Device(
            path: try ObjectPath("/org/bluez/\(adapter)/dev_" + address.description.replacing(":", with: "_")),
            adapter: adapter, address: address)
    }

    @Test func linksPassEveryDevicesLinkAndBlueZStateButNoValueOrAdvertisement() throws {
        let strap = try device("F1:E2:D3:C4:B5:A6"), other = try device("C4:7C:8D:6A:3E:01")
        let value = CharacteristicValue(
            adapter: "hci0", device: strap.address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2A37),
            handle: nil, value: [0x00, 0x48], timestamp: Date())
        let links = CentralEventFilter.links
        let oneDevice = CentralEventFilter.link(of: strap.address, adapter: "hci0")
        let passedByLinks: [CentralEvent] = [
            .connected(other), .disconnected(strap, reason: nil), .servicesResolved(other), .deviceLost(strap),
            .adapterState(adapter: "hci0", .poweredOff), .availability(.available),
        ]
        for event in passedByLinks { #expect(links.passes(event), "\(event)") }
        let stoppedByLinks: [CentralEvent] = [.characteristicValue(value), .deviceDiscovered(strap), .deviceUpdated(other)]
        for event in stoppedByLinks { #expect(!links.passes(event), "\(event)") }
        #expect(!links.passesValues && !oneDevice.passesValues && CentralEventFilter.all.passesValues)
        #expect(oneDevice.passes(.connected(strap)) && !oneDevice.passes(.connected(other)))
        #expect(oneDevice.passes(.availability(.bluetoothdNotRunning)))
        #expect(!oneDevice.passes(.characteristicValue(value)))
    }
}
