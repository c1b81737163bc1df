import BlueZ
import GatewayCore
import HTTPServer

extension Gateway {
    func addEventRoutes(to router: inout Router) {
        router.get("/v1/events") { [self] request in
            var types: Set<String>?
            for value in request.query.values(for: "type") {
                for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard LoggedEvent.types.contains(String(part)) else {
                        throw Problem.invalidParameter(
                            "type", "'\(part)' is not an event type (\(LoggedEvent.types.sorted().joined(separator: ", ")))")
                    }
                    types = (types ?? []).union([String(part)])
                }
            }
            let device = try request.query["device"].map { (text) throws(Problem) in
                try Request.bluetoothAddress(text, parameter: "device").description
            }
            let lastEventID = try request.lastEventID()
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            let id = log.makeSubscriberID()
            let writer = streams.makeWriter(
                .events, buffering, lifetime: lifetime,
                lastEvent: { [log] ending in ending == .gatewayStopping ? Self.gatewayStopping(log) : nil }
            ) { [log] _ in log.unsubscribe(id) }
            log.subscribe(writer, id: id, filter: EventFilter(types: types, device: device), after: lastEventID)
            return .eventStream(writer)
        }
    }

    /// The last event of `GET /v1/events` when the gateway stops (sent
    /// whatever the stream's type filter).
    static func gatewayStopping<Event>(_ log: EventLog<Event>) -> ServerSentEvent {
        ServerSentEvent(
            id: String(log.nextID()), event: "gateway-stopping",
            data: JSON.object([("reason", .string("the gateway is stopping"))]).text)
    }
}
