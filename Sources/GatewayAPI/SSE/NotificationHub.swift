import BlueZ
import Foundation
import HTTPServer

/// Writes a characteristic's notifications to SSE streams.
///
/// Each stream holds its own subscription: `Central` counts the
/// subscriptions of a characteristic and shares one BlueZ-side subscription
/// (StartNotify for the first, StopNotify after the last) among them. Every
/// subscriber receives the same value instance with each notification, so
/// a value's event id and its frame in each encoding are made once
/// (`CharacteristicValue.derived`) and written to every stream that wants
/// them; nothing here counts streams.
enum NotificationHub {
    /// Feeds `writer` from `subscription` until the subscription ends (the
    /// device disconnected, BlueZ came back without it: the stream's last
    /// event says why) or the stream's task is cancelled (its client left;
    /// ending the iteration ends this subscription). Tells the client when
    /// BlueZ is unreachable and when values flow again.
    static func feed(_ writer: StreamWriter, from subscription: NotificationSubscription, encoding: ByteEncoding, log: EventLog) async {
        var reason = (code: "gateway-stopping", detail: "")
        do {
            for try await event in subscription.events {
                switch event {
                case .value(let value): writer.write(frame(of: value, encoding, log: log))
                case .interrupted(let error):
                    let data = JSON.object([("reason", .string(Self.reason(error))), ("detail", .string(error.message))])
                    writer.write(data.eventFrame(id: log.nextID(), event: "subscription-interrupted"))
                case .resumed:
                    writer.write(JSON.object([]).eventFrame(id: log.nextID(), event: "subscription-resumed"))
                }
            }
        } catch let error as BlueZError {
            reason = (Self.reason(error), error.message)
        } catch {
            reason = ("failed", "\(error)")
        }
        if Task.isCancelled { return }
        writer.finish(with: ended(reason.code, reason.detail, log: log))
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
