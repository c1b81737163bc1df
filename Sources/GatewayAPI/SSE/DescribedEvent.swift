#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import HTTPServer
import Logging
import PersistedState

/// An event given by its type and its data, made only if a stream takes
/// it: the logs whose events arrive already described (the fleet's, which
/// come as JSON from other gateways; the peripheral role's).
struct DescribedEvent: LoggableEvent {
    /// The event's data: any text (each of its lines becomes a `data:`
    /// line), or JSON.
    enum Body: Sendable {
        case text(@Sendable () -> String)
        case json(@Sendable () -> JSON)
    }

    let type: String
    let device: String?
    let body: Body

    /// The data as an SSE stream and the store carry it.
    func data() -> [UInt8] {
        switch body {
        case .text(let text): return Array(text().utf8)
        case .json(let json):
            var bytes: [UInt8] = []
            json().write(to: &bytes)
            return bytes
        }
    }
}

/// `DescribedEvent`s as SSE frames.
struct DescribedEventEncoding: ServerSentEventEncoding {
    func frame(of event: DescribedEvent, id: UInt64, time: Date) -> [UInt8] {
        switch event.body {
        case .json(let json): json().eventFrame(id: id, event: event.type)
        case .text(let text): ServerSentEvent(id: String(id), event: event.type, data: text()).encoded
        }
    }

    func storedData(of event: DescribedEvent, time: Date) -> [UInt8] { event.data() }
}

extension EventLog where Event == DescribedEvent {
    /// A log of described events that keeps the last `capacity` for streams
    /// that resume, and with `store` every event in the store's log too.
    convenience init(capacity: Int = 4096, store: Store? = nil, logger: Logger = Logger(label: "blegateway.events")) {
        self.init(capacity: capacity, store: store, encoding: DescribedEventEncoding(), logger: logger)
    }

    /// Publishes an event whose data is `data`, any text (each of its lines
    /// becomes a `data:` line), evaluated only if a stream takes the event.
    @discardableResult
    func publish(type: String, device: String? = nil, data: @autoclosure @escaping @Sendable () -> String) -> UInt64 {
        publish(DescribedEvent(type: type, device: device, body: .text(data)))
    }

    /// Publishes an event whose data is `json`, evaluated only if a stream
    /// takes the event.
    @discardableResult
    func publish(type: String, device: String? = nil, json: @autoclosure @escaping @Sendable () -> JSON) -> UInt64 {
        publish(DescribedEvent(type: type, device: device, body: .json(json)))
    }
}
