import BlueZ
import DBus
import Foundation
import HTTPServer
import Synchronization

/// Notification streams, shared per characteristic: the first stream of a
/// characteristic subscribes (StartNotify), every value is encoded once per
/// encoding in use and written to every stream, and the last stream to
/// close ends the subscription (StopNotify).
final class NotificationHub: Sendable {
    /// The streams of one characteristic and the task that feeds them.
    private struct Channel {
        var writers: [UInt64: (writer: StreamWriter, encoding: ByteEncoding)] = [:]
        /// Resolves once the subscription is in place (or failed); also the
        /// channel's identity.
        let ready: Task<Result<NotificationSubscription, BlueZError>, Never>
        var pump: StreamTask?
    }

    private let channels = Mutex<(next: UInt64, byPath: [ObjectPath: Channel])>((0, [:]))

    /// Opens a stream of the characteristic at `path`: joins its channel,
    /// or subscribes when it is the first. The writer is made (by
    /// `makeWriter`, given the stream's key) only once the subscription is
    /// in place, so a failure (not connected, not notifiable, ...) is the
    /// client's HTTP error and no stream is left behind. A channel that
    /// ends while the stream waits for it (its last stream closed) is
    /// subscribed again, a few times, before the client is told to retry.
    func open(
        path: ObjectPath, encoding: ByteEncoding, log: EventLog,
        subscribe: @escaping @Sendable () async throws(BlueZError) -> NotificationSubscription,
        makeWriter: (UInt64) -> StreamWriter
    ) async throws -> StreamWriter {
        for _ in 0..<3 {
            if let writer = try await join(path: path, encoding: encoding, log: log, subscribe: subscribe, makeWriter: makeWriter) {
                return writer
            }
        }
        throw Problem(.notConnected, status: .conflict, detail: "the subscription kept ending; try again")
    }

    /// One attempt of `open`: nil if the channel ended meanwhile.
    private func join(
        path: ObjectPath, encoding: ByteEncoding, log: EventLog,
        subscribe: @escaping @Sendable () async throws(BlueZError) -> NotificationSubscription,
        makeWriter: (UInt64) -> StreamWriter
    ) async throws(BlueZError) -> StreamWriter? {
        let ready = channels.withLock { state in
            if let channel = state.byPath[path] { return channel.ready }
            let ready = Task { () async -> Result<NotificationSubscription, BlueZError> in
                do throws(BlueZError) { return .success(try await subscribe()) } catch { return .failure(error) }
            }
            state.byPath[path] = Channel(ready: ready)
            return ready
        }
        let outcome = await ready.value
        return try channels.withLock { state throws(BlueZError) -> StreamWriter? in
            // The channel may have ended (or failed) while this stream waited.
            guard let channel = state.byPath[path], channel.ready == ready else { return nil }
            let subscription: NotificationSubscription
            switch outcome {
            case .success(let subscribed): subscription = subscribed
            case .failure(let error):
                state.byPath[path] = nil
                throw error
            }
            let key = state.next
            state.next += 1
            let writer = makeWriter(key)
            state.byPath[path]?.writers[key] = (writer, encoding)
            if channel.pump == nil {
                let pump = StreamTask()
                state.byPath[path]?.pump = pump
                pump.start { [weak self] in await self?.pump(path: path, subscription: subscription, log: log) }
            }
            return writer
        }
    }

    /// Removes a stream (its client left); the last one ends the subscription.
    func close(path: ObjectPath, key: UInt64) {
        let pump = channels.withLock { state -> StreamTask? in
            guard state.byPath[path]?.writers.removeValue(forKey: key) != nil,
                state.byPath[path]?.writers.isEmpty == true
            else { return nil }
            defer { state.byPath[path] = nil }
            return state.byPath[path]?.pump
        }
        pump?.cancel()
    }

    /// Feeds the channel's streams until the subscription ends (the device
    /// disconnected, BlueZ came back without it) or the last stream closes;
    /// tells them when BlueZ is unreachable and when values flow again.
    private func pump(path: ObjectPath, subscription: NotificationSubscription, log: EventLog) async {
        var reason = (code: "gateway-stopping", detail: "")
        do {
            for try await event in subscription.events {
                switch event {
                case .value(let value): deliver(value, path: path, log: log)
                case .interrupted(let error):
                    broadcast(
                        "subscription-interrupted",
                        JSON.object([("reason", .string(Self.reason(error))), ("detail", .string(error.message))]),
                        path: path, log: log)
                case .resumed:
                    broadcast("subscription-resumed", JSON.object([]), path: path, log: log)
                }
            }
        } catch let error as BlueZError {
            reason = (Self.reason(error), error.message)
        } catch {
            reason = ("failed", "\(error)")
        }
        if Task.isCancelled { return }
        let writers = channels.withLock { state -> [StreamWriter] in
            defer { state.byPath[path] = nil }
            return state.byPath[path]?.writers.values.map(\.writer) ?? []
        }
        for writer in writers { Self.end(writer, reason: reason.code, detail: reason.detail, log: log) }
    }

    /// Writes one status event to every stream of the channel.
    private func broadcast(_ type: String, _ data: JSON, path: ObjectPath, log: EventLog) {
        let writers = channels.withLock { $0.byPath[path]?.writers.values.map(\.writer) ?? [] }
        guard !writers.isEmpty else { return }
        let bytes = ServerSentEvent(id: String(log.nextID()), event: type, data: data.text).encoded
        for writer in writers { writer.write(bytes) }
    }

    /// Writes one value to every stream of the channel, encoding it once per
    /// encoding in use.
    private func deliver(_ value: CharacteristicValue, path: ObjectPath, log: EventLog) {
        let writers = channels.withLock { $0.byPath[path]?.writers.values.map { $0 } ?? [] }
        guard !writers.isEmpty else { return }
        let id = log.nextID()
        // At most one frame per encoding; a linear search of that short list
        // costs less than hashing the encoding once per stream.
        var frames: [(encoding: ByteEncoding, bytes: [UInt8])] = []
        for (writer, encoding) in writers {
            if let frame = frames.first(where: { $0.encoding == encoding }) {
                writer.write(frame.bytes)
                continue
            }
            let bytes = Self.json(value, encoding).eventFrame(id: id, event: "notification")
            frames.append((encoding, bytes))
            writer.write(bytes)
        }
    }

    static func json(_ value: CharacteristicValue, _ encoding: ByteEncoding) -> JSON {
        .object(ModelJSON.characteristicValue(value, encoding: encoding) + [("timestamp", ModelJSON.timestamp(value.timestamp))])
    }

    private static func end(_ writer: StreamWriter, reason: String, detail: String, log: EventLog) {
        writer.finish(with: ended(reason, detail, log: log))
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
