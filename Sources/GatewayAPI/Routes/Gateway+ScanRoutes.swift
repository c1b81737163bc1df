import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import HTTPServer

extension Gateway {
    func addScanRoutes(to router: inout Router) {
        router.get("/v1/scan") { [self] request in
            let filter = try ScanFilterParameters(query: request).filter(
                defaultPresenceTimeout: configuration.presenceTimeout)
            let adapter = try request.adapterQuery(default: configuration.defaultAdapter)
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            let mode = try ScanModeParameters(query: request).scanMode(filter: filter, patternName: "pattern")
            let session = try await Self.passiveHint { () throws(BlueZError) in
                try await central.scan(adapter: adapter, filter: filter, mode: mode)
            }
            return .eventStream(scanStream(session, buffering, lifetime: lifetime))
        }
        router.post("/v1/scan") { [self] request in
            let body = try JSONBody(
                request,
                allowed: Set(["duration_ms", "adapter"]).union(ScanFilterParameters.names).union(ScanModeParameters.names),
                optional: true)
            let limit = configuration.maximumScanDuration.milliseconds
            let duration = try body["duration_ms"].int(in: 100...limit).map { Duration.milliseconds($0) }
                ?? configuration.defaultScanDuration
            let filter = try ScanFilterParameters(body: body).filter(defaultPresenceTimeout: nil)
            let mode = try ScanModeParameters(body: body).scanMode(filter: filter, patternName: "patterns")
            // The adapter, as on every route, may be named in the query too.
            let queryAdapter = try request.adapterQuery(default: nil)
            let bodyAdapter = try body["adapter"].string()
            if let bodyAdapter { try Request.checkAdapterName(bodyAdapter, parameter: "adapter") }
            if let bodyAdapter, let queryAdapter, bodyAdapter != queryAdapter {
                throw Problem.invalidParameter("adapter", "the body names \(bodyAdapter), the query \(queryAdapter)")
            }
            let adapter = bodyAdapter ?? queryAdapter ?? configuration.defaultAdapter
            let devices = try await Self.passiveHint { () throws(BlueZError) in
                try await central.discover(adapter: adapter, filter: filter, mode: mode, duration: duration)
            }
            return .json(
                .object([
                    ("duration_ms", .int(duration.milliseconds)),
                    ("mode", .string(mode.name)),
                    ("devices", .array(devices.map { ModelJSON.device($0, encoding: .hex) })),
                ]))
        }
    }

    /// Runs a scan call; a passive scan that bluetoothd cannot serve (no
    /// advertisement monitor) says how to get one, or the fallback.
    private static func passiveHint<T>(_ body: () async throws(BlueZError) -> T) async throws(BlueZError) -> T {
        do {
            return try await body()
        } catch where error.code == .notSupported && error.message.contains("advertisement monitor") {
            var hinted = error
            hinted.message += "; or ask fallback=low-duty for short active scans instead"
            throw hinted
        }
    }

    /// A stream that scans while it is open: the session ends when the
    /// client leaves.
    private func scanStream(_ session: DiscoverySession, _ buffering: StreamConfiguration, lifetime: Duration?) -> StreamWriter {
        let consumer = StreamTask()
        let writer = streams.makeWriter(
            .scan, buffering, lifetime: lifetime, lastEvent: { [log] ending in Self.scanStopped(log, ending) }
        ) { _ in consumer.cancel() }
        consumer.start { [log] in
            for await event in session {
                let (type, data): (String, JSON)
                switch event {
                case .discovered(let device): (type, data) = ("discovered", Self.scanJSON(device))
                case .updated(let device): (type, data) = ("updated", Self.scanJSON(device))
                case .lost(let device): (type, data) = ("lost", Self.scanJSON(device, lost: "removed"))
                case .silent(let device): (type, data) = ("lost", Self.scanJSON(device, lost: "timeout"))
                case .interrupted(let error):
                    (type, data) = ("scan-interrupted", .object([("reason", .string(error.message))]))
                case .resumed:
                    (type, data) = ("scan-resumed", .object([]))
                }
                // Paced: the first report of every device around can be
                // more than a stream buffers; the session holds the newest
                // reports while the client takes it.
                guard await writer.writePaced(data.eventFrame(id: log.nextID(), event: type)) else { return }
            }
            // The session ended underneath the stream (the gateway is stopping).
            writer.finish(with: Self.scanStopped(log, .gatewayStopping))
        }
        return writer
    }

    private static func scanStopped(_ log: EventLog<LoggedEvent>, _ ending: OpenStreams.Ending) -> ServerSentEvent {
        let reason =
            switch ending {
            case .gatewayStopping: "the gateway is stopping"
            case .durationElapsed: "the stream's duration_ms elapsed"
            }
        return ServerSentEvent(
            id: String(log.nextID()), event: "scan-stopped", data: JSON.object([("reason", .string(reason))]).text)
    }

    /// A scan event's data; `lost` says why a `lost` event came: `removed`
    /// (bluetoothd dropped the device) or `timeout` (not heard for the
    /// presence timeout).
    private static func scanJSON(_ device: Device, lost: String? = nil) -> JSON {
        var members: [(String, JSON)] = [
            ("device", ModelJSON.device(device, encoding: .hex)),
            ("timestamp", ModelJSON.timestamp(Date())),
        ]
        if let lost { members.append(("reason", .string(lost))) }
        return .object(members)
    }
}
