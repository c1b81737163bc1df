import BlueZ
import HTTPServer
import Foundation
import Testing

@testable import GatewayAPI
@testable import GatewayCore

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

    @Test func theValueFormatCarriesTheValueAloneWithTheSameId() throws {
        let log = EventLog(capacity: 16)
        let value = CharacteristicValue(
            adapter: "hci0", device: try BluetoothAddress(parsing: "AA:BB:CC:DD:EE:FF"), service: nil,
            characteristic: BluetoothUUID(uuid16: 0x2a37), handle: 12, value: [6, 72],
            timestamp: Date(timeIntervalSince1970: 0))
        let event = String(decoding: NotificationHub.frame(of: value, .hex, .event, log: log), as: UTF8.self)
        let alone = String(decoding: NotificationHub.frame(of: value, .hex, .value, log: log), as: UTF8.self)
        let id = event.split(separator: "\n").first { $0.hasPrefix("id: ") } ?? "none"
        #expect(alone == "\(id)\nevent: notification\ndata: \"0648\"\n\n")
        #expect(
            String(decoding: NotificationHub.frame(of: value, .base64, .value, log: log), as: UTF8.self)
                == "\(id)\nevent: notification\ndata: \"Bkg=\"\n\n")
    }

    @Test func theValueFormatIsHexOrBase64() throws {
        #expect(try NotificationFormat(parameter: nil, encoding: .utf8) == .event)
        #expect(try NotificationFormat(parameter: "value", encoding: .base64) == .value)
        for (format, encoding) in [("value", ByteEncoding.utf8), ("values", .hex), ("", .hex)] {
            #expect(throws: Problem.self) { try NotificationFormat(parameter: format, encoding: encoding) }
        }
    }
}

/// What a lease delivers before its stream's writer exists is written first,
/// in order; an end that came meanwhile is the stream's last event.
@Suite struct NotificationTargetTests {
    @Test func framesBeforeTheWriterComeFirstInOrder() {
        let target = NotificationTarget()
        target.write(Array("a\n\n".utf8))
        target.write(Array("b\n\n".utf8))
        let writer = StreamWriter()
        target.attach(writer)
        target.write(Array("c\n\n".utf8))
        #expect(writer.queuedText() == "a\n\nb\n\nc\n\n")
        #expect(writer.isOpen)
    }

    @Test func anEndBeforeTheWriterEndsItAfterItsFrames() {
        let target = NotificationTarget()
        target.write(Array("a\n\n".utf8))
        target.finish(with: ServerSentEvent(id: "9", event: "subscription-ended", data: "{}"))
        target.write(Array("late\n\n".utf8))
        let writer = StreamWriter()
        target.attach(writer)
        #expect(writer.queuedText() == "a\n\nid: 9\nevent: subscription-ended\ndata: {}\n\n")
        #expect(!writer.isOpen)
    }
}

/// A subscription's end becomes the `reason` of the stream's last event
/// from its type, not from its message's words.
@Suite struct SubscriptionEndReasonTests {
    @Test func eachEndHasItsReason() {
        let notConnected = BlueZError(.notConnected, "whatever the words")
        let cases: [(SubscriptionEnd, String)] = [
            (SubscriptionEnd(.deviceDisconnected, notConnected), "disconnected"),
            (SubscriptionEnd(.bluezRestarted, notConnected), "bluez-restarted"),
            (SubscriptionEnd(.deviceRemoved, BlueZError(.notFound, "gone")), "device-removed"),
            (SubscriptionEnd(.characteristicRemoved, BlueZError(.notFound, "gone")), "device-removed"),
            (SubscriptionEnd(.centralStopped, BlueZError(.cancelled, "stopped")), "gateway-stopping"),
            (SubscriptionEnd(.restartFailed, BlueZError(.timeout, "bluetoothd restarted, then no answer")), "failed"),
            (SubscriptionEnd(.restartFailed, BlueZError(.bluetoothdUnavailable, "gone again")), "bluez-unavailable"),
        ]
        for (end, reason) in cases {
            #expect(NotificationHub.reason(of: end) == reason, "\(end.reason)")
        }
        // A message that happens to say "came back" or "restart" changes nothing.
        #expect(NotificationHub.reason(of: SubscriptionEnd(.deviceDisconnected, BlueZError(.notConnected, "it came back"))) == "disconnected")
    }
}
