import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPServer

/// Writes a characteristic's notifications to SSE streams.
///
/// Each stream holds its own lease on the characteristic's subscription:
/// `Central` counts the leases and shares one BlueZ-side subscription
/// (StartNotify for the first, StopNotify after the last) among them. It
/// hands every lease the same value instance with each notification, on the
/// thread that received it, so a value's event id and its frame in each
/// encoding are made once (`CharacteristicValue.derived`) and queued on
/// every stream without a task per stream; nothing here counts streams.
enum NotificationHub {
    /// The sink of one stream's lease: values, interruptions and
    /// resumptions as events; the subscription's end (the device
    /// disconnected, BlueZ came back without it) as the stream's last event.
    static func sink(_ target: NotificationTarget, encoding: ByteEncoding, log: EventLog) -> NotificationSink {
        NotificationSink(
            receive: { event in
                switch event {
                case .value(let value): target.write(frame(of: value, encoding, log: log))
                case .interrupted(let error):
                    let data = JSON.object([("reason", .string(Self.reason(error))), ("detail", .string(error.message))])
                    target.write(data.eventFrame(id: log.nextID(), event: "subscription-interrupted"))
                case .resumed:
                    target.write(JSON.object([]).eventFrame(id: log.nextID(), event: "subscription-resumed"))
                }
            },
            ended: { error in
                let reason = error.map { (Self.reason($0), $0.message) } ?? ("gateway-stopping", "")
                target.finish(with: ended(reason.0, reason.1, log: log))
            })
    }

    /// A value's `notification` frame in `encoding`: made by the first
    /// stream that writes it, with one event id for every encoding.
    static func frame(of value: CharacteristicValue, _ encoding: ByteEncoding, log: EventLog) -> [UInt8] {
        let id = value.derived.value(for: "sse.id") { log.nextID() }
        return value.derived.value(for: frameKey(encoding)) {
            json(value, encoding).eventFrame(id: id, event: "notification")
        }
    }

    private static func frameKey(_ encoding: ByteEncoding) -> String {
        switch encoding {
        case .hex: "sse.frame.hex"
        case .base64: "sse.frame.base64"
        case .utf8: "sse.frame.utf8"
        }
    }

    static func json(_ value: CharacteristicValue, _ encoding: ByteEncoding) -> JSON {
        .object(ModelJSON.characteristicValue(value, encoding: encoding) + [("timestamp", ModelJSON.timestamp(value.timestamp))])
    }

    /// A notification stream's last event.
    static func ended(_ reason: String, _ detail: String, log: EventLog) -> ServerSentEvent {
        let data = JSON.object([("reason", .string(reason)), ("detail", .string(detail))]).text
        return ServerSentEvent(id: String(log.nextID()), event: "subscription-ended", data: data)
    }

    private static func reason(_ error: BlueZError) -> String {
        switch error.code {
        case .notConnected: error.message.contains("came back") ? "bluez-restarted" : "disconnected"
        case .notFound: "device-removed"
        case .adapterUnavailable, .poweredOff, .bluetoothdUnavailable: "bluez-unavailable"
        case .cancelled: "gateway-stopping"
        default: error.message.contains("restart") ? "bluez-restarted" : "failed"
        }
    }
}
