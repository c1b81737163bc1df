import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import HTTPServer

/// Writes a characteristic's notifications to SSE streams.
///
/// Each stream holds its own lease on the characteristic's subscription:
/// `Central` counts the leases and shares one BlueZ-side subscription
/// (StartNotify for the first, StopNotify after the last) among them. It
/// hands every lease the same value instance with each notification, on the
/// thread that delivers it (after releasing its lock), so a value's event id
/// and its frame in each encoding are made once
/// (`CharacteristicValue.derived`) and queued on every stream without a
/// task per stream; nothing here counts streams.
enum NotificationHub {
    /// The sink of one stream's lease: values, interruptions and
    /// resumptions as events; the subscription's end (the device
    /// disconnected, BlueZ came back without it) as the stream's last event.
    static func sink(
        _ target: NotificationTarget, encoding: ByteEncoding, format: NotificationFormat = .event, log: EventLog<some LoggableEvent>
    ) -> NotificationSink {
        NotificationSink(
            receive: { event in
                switch event {
                case .value(let value): target.write(frame(of: value, encoding, format, log: log))
                case .interrupted(let error):
                    let data = JSON.object([("reason", .string(Self.reason(of: error))), ("detail", .string(error.message))])
                    target.write(data.eventFrame(id: log.nextID(), event: "subscription-interrupted"))
                case .resumed:
                    target.write(JSON.object([]).eventFrame(id: log.nextID(), event: "subscription-resumed"))
                }
            },
            ended: { end in
                let reason = end.map { (Self.reason(of: $0), $0.error.message) } ?? ("gateway-stopping", "")
                target.finish(with: ended(reason.0, reason.1, log: log))
            })
    }

    /// A value's `notification` frame in `encoding` and `format`: made by
    /// the first stream that writes it, with one event id for every
    /// encoding and format.
    static func frame(
        of value: CharacteristicValue, _ encoding: ByteEncoding, _ format: NotificationFormat = .event, log: EventLog<some LoggableEvent>
    ) -> [UInt8] {
        let id = value.derived.value(for: EventID()) { log.nextID() }
        return value.derived.value(for: Frame(encoding: encoding, format: format)) {
            switch format {
            case .event: json(value, encoding).eventFrame(id: id, event: "notification")
            case .value: JSON.string(encoding.encode(value.value).text).eventFrame(id: id, event: "notification")
            }
        }
    }

    /// A notification's event id, the same on every stream.
    private struct EventID: DerivedKey {
        typealias Value = UInt64
    }

    /// A notification's SSE frame in one encoding and format.
    private struct Frame: DerivedKey {
        typealias Value = [UInt8]
        let encoding: ByteEncoding
        let format: NotificationFormat
    }

    static func json(_ value: CharacteristicValue, _ encoding: ByteEncoding) -> JSON {
        .object(ModelJSON.characteristicValue(value, encoding: encoding) + [("timestamp", ModelJSON.timestamp(value.timestamp))])
    }

    /// A notification stream's last event.
    /// The last event of a notification stream the gateway ends: why, as
    /// `subscription-ended`.
    static func lastEvent(log: EventLog<some LoggableEvent>) -> OpenStreams.LastEvent {
        { ending in
            switch ending {
            case .gatewayStopping: ended("gateway-stopping", "the gateway is stopping", log: log)
            case .durationElapsed: ended("duration-elapsed", "the stream's duration_ms elapsed", log: log)
            }
        }
    }

    static func ended(_ reason: String, _ detail: String, log: EventLog<some LoggableEvent>) -> ServerSentEvent {
        let data = JSON.object([("reason", .string(reason)), ("detail", .string(detail))]).text
        return ServerSentEvent(id: String(log.nextID()), event: "subscription-ended", data: data)
    }

    /// The `SubscriptionEnded` reason of a subscription's end.
    static func reason(of end: SubscriptionEnd) -> String {
        switch end.reason {
        case .deviceDisconnected: "disconnected"
        case .deviceRemoved, .characteristicRemoved: "device-removed"
        case .bluezRestarted: "bluez-restarted"
        case .centralStopped: "gateway-stopping"
        case .restartFailed: reason(of: end.error)
        }
    }

    /// The `SubscriptionEnded` reason of an interruption, or of a failure
    /// to start notifications again, by the error's code.
    static func reason(of error: BlueZError) -> String {
        switch error.code {
        case .notConnected: "disconnected"
        case .notFound: "device-removed"
        case .adapterUnavailable, .poweredOff, .bluetoothdUnavailable: "bluez-unavailable"
        case .cancelled: "gateway-stopping"
        default: "failed"
        }
    }
}
