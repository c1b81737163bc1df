import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import HTTPServer

// The fleet behind this gateway's HTTP API (docs/fleet.md): what the fleet's
// gateways publish on the broker, merged, and commands carried over the
// broker to the gateway that suits the device (`<prefix>/any/cmd/…`).
extension Gateway {
    /// How long a forwarded command waits for an answer beyond its own
    /// `timeout_ms` (or the 30 s assumed without one): the claim delays
    /// (500 ms per place in the ranking) and two broker round trips.
    static let fleetAnswerMargin = Duration.seconds(5)
    /// The wait assumed for a forwarded command that gives no `timeout_ms`.
    static let fleetDefaultCommandTime = Duration.seconds(30)

    func addFleetRoutes(to router: inout Router) {
        let device = "/v1/fleet/devices/{address}"
        let characteristic = device + "/characteristics/{characteristic}"
        let value = characteristic + "/value"
        let descriptorValue = characteristic + "/descriptors/{descriptor}/value"

        router.get("/v1/fleet/gateways") { [self] _ in
            let fleet = try fleetAccess()
            return .json(.array(fleet.gateways().map(Self.fleetGatewayJSON)))
        }
        router.get("/v1/fleet/devices") { [self] _ in
            let fleet = try fleetAccess()
            return .json(.array(fleet.devices().map(Self.fleetDeviceJSON)))
        }
        router.get(device) { [self] request in
            let fleet = try fleetAccess()
            let address = try request.address().description
            guard let found = fleet.devices().first(where: { $0.address == address }) else {
                throw Problem(.notFound, status: .notFound, detail: "no gateway of the fleet hears, connects or keeps \(address)")
            }
            return .json(Self.fleetDeviceJSON(found))
        }
        router.post(device + "/connect") { [self] request in
            try await forward("connect", request)
        }
        router.post(device + "/disconnect") { [self] request in
            try await forward("disconnect", request)
        }
        router.get(value) { [self] request in
            try await forward("read", request, characteristic: true, query: ["service", "encoding", "pair"])
        }
        router.put(value) { [self] request in
            let body = try JSONBody(request, allowed: ["value", "encoding", "type", "offset"])
            return try await forward(
                "write", request, characteristic: true, query: ["service", "pair"],
                body: ["value", "encoding", "type", "offset"].compactMap { key in body[key].json.map { (key, $0) } })
        }
        router.get(device + "/services") { [self] request in
            // `?service=` may repeat, or list several UUIDs; checked here,
            // carried as the texts given.
            _ = try request.uuidList("service")
            let services = request.query.values(for: "service").map(JSON.string)
            return try await forward("services", request, body: services.isEmpty ? [] : [("service", .array(services))])
        }
        router.get(characteristic) { [self] request in
            try await forward("characteristic", request, characteristic: true, query: ["service"])
        }
        router.get(descriptorValue) { [self] request in
            let offset = try request.integer("offset", in: 0...0xFFFF)
            return try await forward(
                "read-descriptor", request, characteristic: true, descriptor: true, query: ["service", "encoding"],
                body: offset.map { [("offset", .int($0))] } ?? [])
        }
        router.put(descriptorValue) { [self] request in
            let body = try JSONBody(request, allowed: ["value", "encoding", "offset"])
            return try await forward(
                "write-descriptor", request, characteristic: true, descriptor: true, query: ["service"],
                body: ["value", "encoding", "offset"].compactMap { key in body[key].json.map { (key, $0) } })
        }
        router.put(device + "/keep") { [self] request in
            let body = try JSONBody(request, allowed: Self.keepFields, optional: true)
            _ = try fleetAccess()
            if let wish = try Self.fleetKeep(try request.address(), body.root) {
                try await keepByFleet(wish)
                let (status, json) = CommandJSON.keep(.keptByFleet(wish))
                return .json(json, status: Status(status))
            }
            return try await forward(
                "keep", request, body: ["max_attempts", "label"].compactMap { key in body[key].json.map { (key, $0) } })
        }
        router.get(device + "/keep") { [self] request in
            try await forward("keep-status", request)
        }
        router.delete(device + "/keep") { [self] request in
            // A device the fleet keeps is released by the fleet, whichever
            // gateway holds it; any other is unkept where it is kept.
            let fleet = try fleetAccess()
            let address = try request.address()
            let keptByFleet = fleet.devices().contains { $0.address == address.description && $0.fleetKeep != nil }
            if try Self.fleetQuery(request) || keptByFleet {
                try await unkeepByFleet(address)
                return Response(status: .noContent)
            }
            return try await forward("unkeep", request)
        }
        router.get("/v1/fleet/events") { [self] request in
            let fleet = try fleetAccess()
            let device = try request.query["device"].map { (text) throws(Problem) in
                try Request.bluetoothAddress(text, parameter: "device").description
            }
            let lastEventID = try request.lastEventID()
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            try await followFleetEvents(fleet)
            let id = fleetLog.makeSubscriberID()
            let writer = streams.makeWriter(
                .events, buffering, lifetime: lifetime,
                lastEvent: { [fleetLog] ending in ending == .gatewayStopping ? Self.gatewayStopping(fleetLog) : nil }
            ) { [fleetLog] _ in fleetLog.unsubscribe(id) }
            fleetLog.subscribe(writer, id: id, filter: EventFilter(types: nil, device: device), after: lastEventID)
            return .eventStream(writer)
        }
    }

    /// Lets the `/v1/fleet/…` routes reach the fleet (the launcher attaches
    /// the MQTT bridge).
    public func attachFleet(_ fleet: any FleetAccess) {
        fleetLink.withLock { $0.fleet = fleet }
        core.attachFleet(FleetAccessKeeping(fleet: fleet))
    }

    /// The fleet, or the 404 of a gateway that is in none.
    func fleetAccess() throws(Problem) -> any FleetAccess {
        guard let fleet = fleetLink.withLock({ $0.fleet }) else {
            throw Problem(
                .notFound, status: .notFound,
                detail: "this gateway is not in a fleet: the /v1/fleet/ routes need the MQTT bridge (--mqtt)")
        }
        return fleet
    }

    /// Starts feeding the fleet's events into `fleetLog`, once: from the
    /// first `GET /v1/fleet/events` on, this gateway receives every event
    /// the fleet publishes (docs/fleet.md says what that costs).
    private func followFleetEvents(_ fleet: any FleetAccess) async throws(Problem) {
        let first = fleetLink.withLock { link in
            defer { link.followingEvents = true }
            return !link.followingEvents
        }
        guard first else { return }
        do throws(FleetError) {
            try await fleet.followEvents { [fleetLog] event in Self.record(event, in: fleetLog) }
        } catch {
            fleetLink.withLock { $0.followingEvents = false }
            throw Self.fleetProblem(error, waited: nil)
        }
    }

    /// One fleet event in the log: its JSON with `gateway` first; its id is
    /// this gateway's, assigned as it arrives.
    private static func record(_ event: FleetEvent, in log: EventLog<DescribedEvent>) {
        guard case .object(let members)? = try? JSON.parse(event.json),
            case .string(let type)? = members.first(where: { $0.0 == "type" })?.1
        else { return }
        var device: String?
        if case .string(let address)? = members.first(where: { $0.0 == "address" })?.1 { device = address }
        let tagged = JSON.object([("gateway", .string(event.gateway))] + members.filter { $0.0 != "gateway" })
        _ = log.publish(type: type, device: device, json: tagged)
    }

    /// Carries one request to the fleet as the bridge's `command`: the
    /// address, `adapter` and `timeout_ms` (and `characteristic` and the
    /// named query parameters) become its payload; the answer is the
    /// answering gateway's, with its id in the `Gateway` header.
    private func forward(
        _ command: String, _ request: Request, characteristic: Bool = false, descriptor: Bool = false,
        query names: [String] = [], body: [(String, JSON)] = []
    ) async throws(Problem) -> Response {
        let fleet = try fleetAccess()
        let (payload, timeout) = try fleetPayload(
            request, characteristic: characteristic, descriptor: descriptor, query: names, body: body)
        let waited = (timeout ?? Self.fleetDefaultCommandTime) + Self.fleetAnswerMargin
        let answer: FleetAnswer
        do throws(FleetError) {
            answer = try await fleet.send(FleetCommand(name: command, payload: JSON.object(payload).bytes), timeout: waited)
        } catch {
            throw Self.fleetProblem(error, waited: waited)
        }
        return Self.forwardedResponse(answer)
    }

    /// A forwarded command's payload from the request: the address,
    /// `adapter` and `timeout_ms` (and `characteristic` and the named query
    /// parameters), checked here so that a mistake is this gateway's 400,
    /// not a round trip through the broker; and the request's timeout.
    func fleetPayload(
        _ request: Request, characteristic: Bool, descriptor: Bool = false, query names: [String],
        body: [(String, JSON)] = []
    ) throws(Problem) -> (payload: [(String, JSON)], timeout: Duration?) {
        let address = try request.address()
        var payload: [(String, JSON)] = [("address", .string(address.description))]
        if let adapter = try request.adapterQuery(default: nil) { payload.append(("adapter", .string(adapter))) }
        let timeout = try request.timeout(maximum: configuration.maximumTimeout)
        if let timeout { payload.append(("timeout_ms", .int(timeout.milliseconds))) }
        if characteristic {
            // Checked here so that a mistake is this gateway's 400, not a
            // round trip through the broker.
            _ = try request.attribute("characteristic", service: try request.serviceQuery())
            payload.append(("characteristic", .string(request.pathParameter("characteristic"))))
        }
        if descriptor {
            _ = try request.attribute("descriptor", service: nil)
            payload.append(("descriptor", .string(request.pathParameter("descriptor"))))
        }
        for name in names {
            if let text = try request.text(name, maxLength: 64) { payload.append((name, .string(text))) }
        }
        if names.contains("encoding") { _ = try request.encoding() }
        if names.contains("pair") { _ = try request.pairingPolicy() }
        return (payload + body, timeout)
    }

    /// The answering gateway's answer as this route's: its status, content
    /// type and body, with its id in the `Gateway` header.
    static func forwardedResponse(_ answer: FleetAnswer) -> Response {
        var headers: Headers = ["Gateway": answer.gateway]
        if let type = answer.contentType { headers.add(name: "Content-Type", value: type) }
        return Response(status: Status(answer.status), headers: headers, body: answer.body.isEmpty ? .empty : .bytes(answer.body))
    }

    static func fleetProblem(_ error: FleetError, waited: Duration?) -> Problem {
        switch error {
        case .timeout:
            let seconds = waited.map { " within \($0.milliseconds / 1000) s" } ?? ""
            return Problem(
                .timeout, status: .gatewayTimeout,
                detail: "no gateway of the fleet answered\(seconds): none took the command (none online with MQTT commands on) or the one that took it did not finish")
        case .unavailable(let why):
            return Problem(.unavailable, status: .serviceUnavailable, detail: "the fleet cannot be reached: \(why)")
        }
    }

    static func fleetGatewayJSON(_ gateway: FleetGateway) -> JSON {
        .object([
            ("id", .string(gateway.id)), ("online", .bool(gateway.online)),
            ("last_seen", gateway.lastSeen.map(ModelJSON.timestamp) ?? .null),
            ("devices_heard", .int(gateway.devicesHeard)), ("devices_connected", .int(gateway.devicesConnected)),
            ("devices_kept", .int(gateway.devicesKept)),
            ("connection_slots", gateway.connectionSlots.map { .array($0.map { $0.json(named: true) }) } ?? .null),
            ("self", .bool(gateway.isSelf)),
        ])
    }

    static func fleetDeviceJSON(_ device: FleetDevice) -> JSON {
        .object([
            ("address", .string(device.address)),
            (
                "heard_by",
                .array(
                    device.heardBy.map { hearing in
                        .object([
                            ("gateway", .string(hearing.gateway)), ("adapter", hearing.adapter.map(JSON.string) ?? .null),
                            ("rssi", .int(hearing.rssi)),
                            ("rssi_average", .double((hearing.rssiAverage * 10).rounded() / 10)),
                            ("last_seen", ModelJSON.timestamp(hearing.lastSeen)), ("fresh", .bool(hearing.fresh)),
                        ])
                    })
            ),
            ("connected_on", .array(device.connectedOn.map(JSON.string))),
            ("kept", .bool(!device.keptBy.isEmpty || device.fleetKeep != nil)),
            (
                "kept_by",
                .array(
                    device.keptBy.map { keeping in
                        .object([
                            ("gateway", .string(keeping.gateway)), ("adapter", keeping.adapter.map(JSON.string) ?? .null),
                            ("status", keeping.status.map(JSON.string) ?? .null),
                        ])
                    })
            ),
            ("fleet_keep", device.fleetKeep?.json ?? .null),
            ("owner", device.owner.map(JSON.string) ?? .null),
            ("owner_epoch", .int(device.ownerEpoch)),
        ])
    }
}
