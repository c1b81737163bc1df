import GatewayCore
import HTTPServer

// `GET /v1/fleet/devices/{address}/characteristics/{characteristic}/notifications`:
// a notification stream of a device another gateway of the fleet has, as
// `/v1/devices/…/notifications` is on that gateway (docs/fleet.md,
// "Notifications through the fleet").
extension Gateway {
    func addFleetNotificationRoutes(to router: inout Router) {
        router.get("/v1/fleet/devices/{address}/characteristics/{characteristic}/notifications") { [self] request in
            let fleet = try fleetAccess()
            let (payload, timeout) = try fleetPayload(request, characteristic: true, query: ["service"])
            let encoding = try request.encoding()
            let format = try NotificationFormat(parameter: request.query["format"], encoding: encoding)
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            let waited = (timeout ?? Self.fleetDefaultCommandTime) + Self.fleetAnswerMargin
            // As on one gateway, a failure is this request's answer: the
            // stream opens only once the answering gateway has subscribed.
            let target = NotificationTarget()
            let opening: FleetNotificationOpening
            do throws(FleetError) {
                opening = try await fleet.openNotifications(
                    FleetCommand(name: "subscribe", payload: JSON.object(payload).bytes), timeout: waited
                ) { [log] event in
                    switch event {
                    case .value(let json):
                        if let frame = Self.fleetNotificationFrame(json, encoding, format, log: log) { target.write(frame) }
                    case .ended(let reason, let detail):
                        target.finish(with: NotificationHub.ended(reason, detail, log: log))
                    }
                }
            } catch {
                throw Self.fleetProblem(error, waited: waited)
            }
            guard let stream = opening.stream else { return Self.forwardedResponse(opening.answer) }
            let writer = streams.makeWriter(
                .notifications, buffering, lifetime: lifetime,
                lastEvent: NotificationHub.lastEvent(log: log)
            ) { _ in stream.close() }
            target.attach(writer)
            return .eventStream(writer, headers: ["Gateway": stream.gateway])
        }
    }

    /// The `notification` frame of a value another gateway published (its
    /// `characteristic-value` event): the same members as a local
    /// notification's, the value in this stream's `encoding`, with this
    /// gateway's event id; nil for a payload that is not such an event.
    static func fleetNotificationFrame(
        _ payload: [UInt8], _ encoding: ByteEncoding, _ format: NotificationFormat, log: EventLog<LoggedEvent>
    ) -> [UInt8]? {
        guard case .object(let members)? = try? JSON.parse(payload) else { return nil }
        func text(_ name: String) -> String? {
            guard case .string(let value)? = members.first(where: { $0.0 == name })?.1 else { return nil }
            return value
        }
        guard let value = text("value"),
            let bytes = try? ByteEncoding(parameter: text("encoding")).decode(value)
        else { return nil }
        switch format {
        case .value:
            return JSON.string(encoding.encode(bytes).text).eventFrame(id: log.nextID(), event: "notification")
        case .event:
            let kept = ["address", "adapter", "service", "characteristic", "handle"]
            var object = kept.compactMap { name in members.first { $0.0 == name } }
            object += encoding.members(bytes)
            if let timestamp = members.first(where: { $0.0 == "timestamp" }) { object.append(timestamp) }
            return JSON.object(object).eventFrame(id: log.nextID(), event: "notification")
        }
    }
}
