import BlueZ
import Foundation
import Testing

@testable import GatewayAPI

/// A notification is framed once per encoding, with one event id, however
/// many streams write it.
@Suite struct NotificationFrameTests {
    @Test func oneIdPerValueAndOneFramePerEncoding() throws {
        let log = EventLog(capacity: 16)
        let address = try BluetoothAddress(parsing: "AA:BB:CC:DD:EE:FF")
        let value = CharacteristicValue(
            adapter: "hci0", device: address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2a37), handle: 12,
            value: [6, 72], timestamp: Date(timeIntervalSince1970: 0))
        let hex = NotificationHub.frame(of: value, .hex, log: log)
        let hexAgain = NotificationHub.frame(of: value, .hex, log: log)
        let base64 = NotificationHub.frame(of: value, .base64, log: log)
        #expect(hex == hexAgain)
        let hexText = String(decoding: hex, as: UTF8.self)
        let base64Text = String(decoding: base64, as: UTF8.self)
        #expect(hexText.contains("\"0648\"") && base64Text.contains("\"Bkg=\""))
        let id = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("id: ") } }
        #expect(id(hexText) != nil && id(hexText) == id(base64Text))
        // The next notification gets the next id.
        let next = CharacteristicValue(
            adapter: "hci0", device: address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2a37), handle: 12,
            value: [6, 72], timestamp: Date(timeIntervalSince1970: 0))
        #expect(id(String(decoding: NotificationHub.frame(of: next, .hex, log: log), as: UTF8.self)) != id(hexText))
    }
}
