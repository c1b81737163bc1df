import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore
import HTTPServer

extension Gateway {
    func addPeripheralRoutes(to router: inout Router) {
        let applications = "/v1/peripheral/applications"
        let value = applications + "/{id}/characteristics/{characteristic}/value"
        let advertisements = "/v1/peripheral/advertisements"

        // Publishing and removing are durable before the answer, and so is
        // a value a client sets: the store has committed them, so that a
        // restarted gateway publishes the same again.
        router.post(applications) { [self] request in
            let body = try JSONBody(request, allowed: PeripheralJSON.applicationFields)
            let adapter = try adapterField(body, request)
            let command = PublishApplicationCommand(
                application: try PeripheralJSON.application(body), adapter: adapter, stored: request.body)
            let published = try await core.publish(command, owner: client(request).rawValue)
            var response = Response.json(PeripheralJSON.application(published, encoding: .hex), status: .created)
            response.headers["Location"] = "\(applications)/\(published.id)"
            return response
        }
        router.get(applications) { [self] request in
            let encoding = try request.encoding()
            return .json(.array(core.publishedApplications().map { PeripheralJSON.application($0, encoding: encoding) }))
        }
        router.get(applications + "/{id}") { [self] request in
            let encoding = try request.encoding()
            return .json(
                PeripheralJSON.application(try core.publishedApplication(request.pathParameter("id")), encoding: encoding))
        }
        router.delete(applications + "/{id}") { [self] request in
            try await core.withdraw(WithdrawCommand(.application, id: request.pathParameter("id")))
            return Response(status: .noContent)
        }
        router.get(value) { [self] request in
            let uuid = try request.uuid(request.pathParameter("characteristic"), parameter: "characteristic")
            let encoding = try request.encoding()
            let characteristic = LocalCharacteristic(
                application: request.pathParameter("id"), uuid: uuid, service: try request.serviceQuery())
            let bytes = try core.localValue(characteristic)
            return request.wantsRawBytes ? .bytes(bytes) : .json(ModelJSON.value(bytes, encoding: encoding))
        }
        router.put(value) { [self] request in
            let uuid = try request.uuid(request.pathParameter("characteristic"), parameter: "characteristic")
            let write = try request.valueWrite(types: false)
            let characteristic = LocalCharacteristic(
                application: request.pathParameter("id"), uuid: uuid, service: try request.serviceQuery())
            let notified = try await core.setLocalValue(SetLocalValueCommand(characteristic: characteristic, value: write.value))
            return .json(.object([("notified", .bool(notified))]))
        }
        router.post("/v1/peripheral/requests/{id}") { [self] request in
            let body = try JSONBody(request, allowed: ["value", "encoding", "att_error"])
            let answer: RequestAnswer
            if let code = try body["att_error"].int(in: 0...0xFF) {
                guard body["value"].json == nil else {
                    throw Problem.invalidParameter("att_error", "answer with a value or an ATT error, not both")
                }
                answer = .attError(UInt8(code))
            } else {
                let encoding = try ByteEncoding(parameter: try body["encoding"].string())
                answer = .value(try encoding.decode(try body["value"].string() ?? ""))
            }
            try core.answerCentralRequest(AnswerCentralRequestCommand(id: request.pathParameter("id"), answer: answer))
            return Response(status: .noContent)
        }
        router.get("/v1/peripheral/events") { [self] request in
            var types: Set<String>?
            for text in request.query.values(for: "type") {
                for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard PeripheralEvent.types.contains(String(part)) else {
                        throw Problem.invalidParameter(
                            "type", "'\(part)' is not a peripheral event type (\(PeripheralEvent.types.sorted().joined(separator: ", ")))")
                    }
                    types = (types ?? []).union([String(part)])
                }
            }
            let lastEventID = try request.lastEventID()
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            let log = peripheralLog
            let id = log.makeSubscriberID()
            let writer = streams.makeWriter(
                .peripheral, buffering, lifetime: lifetime,
                lastEvent: { ending in ending == .gatewayStopping ? Self.gatewayStopping(log) : nil }
            ) { _ in log.unsubscribe(id) }
            log.subscribe(writer, id: id, filter: EventFilter(types: types), after: lastEventID)
            return .eventStream(writer)
        }
        router.post(advertisements) { [self] request in
            let body = try JSONBody(request, allowed: PeripheralJSON.advertisementFields)
            let adapter = try adapterField(body, request)
            let command = AdvertiseCommand(
                advertisement: try PeripheralJSON.advertisement(body), adapter: adapter, stored: request.body)
            let owner = client(request).rawValue
            let published: PublishedAdvertisement
            do throws(GatewayCommandError) {
                published = try await core.advertise(command, owner: owner)
            } catch {
                throw Self.advertisingProblem(error)
            }
            var response = Response.json(PeripheralJSON.advertisement(published), status: .created)
            response.headers["Location"] = "\(advertisements)/\(published.id)"
            return response
        }
        router.get(advertisements) { [self] _ in
            .json(.array(core.publishedAdvertisements().map(PeripheralJSON.advertisement)))
        }
        router.get(advertisements + "/{id}") { [self] request in
            .json(PeripheralJSON.advertisement(try core.publishedAdvertisement(request.pathParameter("id"))))
        }
        router.delete(advertisements + "/{id}") { [self] request in
            try await core.withdraw(WithdrawCommand(.advertisement, id: request.pathParameter("id")))
            return Response(status: .noContent)
        }
        router.get("/v1/peripheral/advertising") { [self] request in
            let capacity = try await core.advertisingCapacity(
                adapter: try request.adapterQuery(default: configuration.defaultAdapter))
            return .json(.object([
                ("supported_instances", .int(capacity.supportedInstances)),
                ("active_instances", .int(capacity.activeInstances)),
                ("supported_includes", .array(capacity.supportedIncludes.map(JSON.string))),
                ("max_data_length", .int(Advertisement.maximumDataLength)),
            ]))
        }
    }

    /// A refused advertisement's problem: one well formed that 31 bytes
    /// cannot hold (an iBeacon, an Eddystone URL and service UUIDs
    /// together) is a 422, and one past the adapter's advertising
    /// instances a 409 that says so; the rest as the core's table says.
    private static func advertisingProblem(_ error: GatewayCommandError) -> Problem {
        guard case .bluez(let refusal) = error else { return Problem(error) }
        if refusal.dbusName == Advertisement.tooLongErrorName {
            return Problem(.advertisementTooLarge, status: .unprocessableContent, detail: refusal.message)
        }
        if refusal.code == .notPermitted {
            return Problem(
                .notPermitted, status: .conflict,
                detail: "\(refusal.dbusMessage ?? refusal.message): every advertising instance of the adapter is in use; stop one first",
                dbusError: refusal.dbusName)
        }
        return Problem(error)
    }

    /// The adapter of a definition: the body's `adapter`, `?adapter=`, or
    /// the gateway's default.
    private func adapterField(_ body: JSONBody, _ request: Request) throws(Problem) -> String? {
        if let adapter = try body["adapter"].string() {
            try Request.checkAdapterName(adapter, parameter: "adapter")
            return adapter
        }
        return try request.adapterQuery(default: configuration.defaultAdapter)
    }
}
