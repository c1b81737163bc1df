import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPServer
import PersistedState

extension Gateway {
    func addPeripheralRoutes(to router: inout Router) {
        let applications = "/v1/peripheral/applications"
        let value = applications + "/{id}/characteristics/{characteristic}/value"
        let advertisements = "/v1/peripheral/advertisements"

        // Publishing and removing are durable before the answer, and so is
        // a value a client sets: the store has committed them, so that a
        // restarted gateway publishes the same again.
        router.post(applications) { [self] request in
            let body = try JSONBody(request, allowed: Self.applicationFields)
            let adapter = try adapterField(body, request)
            let definition = try PeripheralJSON.application(body)
            let slot = try quotas.reserve(.application, for: client(request))
            let id: String
            let published: PublishedApplication
            do {
                id = try await peripheral.publish(definition, adapter: adapter)
                published = try peripheral.application(id)
                try await persist(
                    .application, id: id, adapter: published.adapter, definition: request.body, owner: slot.owner
                ) {
                    _ = try? await peripheral.removeApplication(id)
                }
            } catch {
                quotas.cancel(slot)
                throw error
            }
            quotas.assign(slot, key: id)
            var response = Response.json(PeripheralJSON.application(published, encoding: .hex), status: .created)
            response.headers["Location"] = "\(applications)/\(id)"
            return response
        }
        router.get(applications) { [self] request in
            let encoding = try request.encoding()
            return .json(.array(peripheral.applications().map { PeripheralJSON.application($0, encoding: encoding) }))
        }
        router.get(applications + "/{id}") { [self] request in
            let encoding = try request.encoding()
            return .json(PeripheralJSON.application(try peripheral.application(request.pathParameter("id")), encoding: encoding))
        }
        router.delete(applications + "/{id}") { [self] request in
            let id = request.pathParameter("id")
            try await peripheral.removeApplication(id)
            quotas.release(.application, key: id)
            try await forget(.application, id: id)
            return Response(status: .noContent)
        }
        router.get(value) { [self] request in
            let uuid = try request.uuid(request.pathParameter("characteristic"), parameter: "characteristic")
            let encoding = try request.encoding()
            let bytes = try peripheral.value(
                of: uuid, service: try request.serviceQuery(), in: request.pathParameter("id"))
            return request.wantsRawBytes ? .bytes(bytes) : .json(ModelJSON.value(bytes, encoding: encoding))
        }
        router.put(value) { [self] request in
            let uuid = try request.uuid(request.pathParameter("characteristic"), parameter: "characteristic")
            let write = try request.valueWrite(types: false)
            let id = request.pathParameter("id")
            let service = try request.serviceQuery()
            if let store {
                let index = try peripheral.characteristicIndex(of: uuid, service: service, in: id)
                do throws(StoreError) {
                    try await store.setPublishedValue(write.value, characteristic: index, application: id)
                } catch {
                    throw Self.storeProblem(error)
                }
            }
            let notified = try await peripheral.setValue(write.value, of: uuid, service: service, in: id)
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
            try peripheral.respond(to: request.pathParameter("id"), with: answer)
            return Response(status: .noContent)
        }
        router.get("/v1/peripheral/events") { [self] request in
            var types: Set<String>?
            for text in request.query.values(for: "type") {
                for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard PeripheralJSON.eventTypes.contains(String(part)) else {
                        throw Problem.invalidParameter(
                            "type", "'\(part)' is not a peripheral event type (\(PeripheralJSON.eventTypes.sorted().joined(separator: ", ")))")
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
            let definition = try PeripheralJSON.advertisement(body)
            let slot = try quotas.reserve(.advertisement, for: client(request))
            let id: String
            let published: PublishedAdvertisement
            do {
                id = try await peripheral.advertise(definition, adapter: adapter)
                published = try peripheral.advertisement(id)
                try await persist(
                    .advertisement, id: id, adapter: published.adapter, definition: request.body, owner: slot.owner
                ) {
                    _ = try? await peripheral.stopAdvertising(id)
                }
            } catch let error as BlueZError where error.dbusName == Advertisement.tooLongErrorName {
                // Well formed, but 31 bytes cannot hold it (an iBeacon, an
                // Eddystone URL and service UUIDs together): a 422.
                quotas.cancel(slot)
                throw Problem(.advertisementTooLarge, status: .unprocessableContent, detail: error.message)
            } catch let error as BlueZError where error.code == .notPermitted {
                quotas.cancel(slot)
                throw Problem(
                    .notPermitted, status: .conflict,
                    detail: "\(error.dbusMessage ?? error.message): every advertising instance of the adapter is in use; stop one first",
                    dbusError: error.dbusName)
            } catch {
                quotas.cancel(slot)
                throw error
            }
            quotas.assign(slot, key: id)
            var response = Response.json(PeripheralJSON.advertisement(published), status: .created)
            response.headers["Location"] = "\(advertisements)/\(id)"
            return response
        }
        router.get(advertisements) { [self] _ in
            .json(.array(peripheral.advertisements().map(PeripheralJSON.advertisement)))
        }
        router.get(advertisements + "/{id}") { [self] request in
            .json(PeripheralJSON.advertisement(try peripheral.advertisement(request.pathParameter("id"))))
        }
        router.delete(advertisements + "/{id}") { [self] request in
            let id = request.pathParameter("id")
            try await peripheral.stopAdvertising(id)
            quotas.release(.advertisement, key: id)
            try await forget(.advertisement, id: id)
            return Response(status: .noContent)
        }
        router.get("/v1/peripheral/advertising") { [self] request in
            let capacity = try await peripheral.advertisingCapacity(adapter: try request.adapterQuery(default: configuration.defaultAdapter))
            return .json(.object([
                ("supported_instances", .int(capacity.supportedInstances)),
                ("active_instances", .int(capacity.activeInstances)),
                ("supported_includes", .array(capacity.supportedIncludes.map(JSON.string))),
                ("max_data_length", .int(Advertisement.maximumDataLength)),
            ]))
        }
    }

    static let applicationFields: Set<String> = ["adapter", "label", "services"]

    /// Stores what was just published (its definition as the client sent
    /// it); when the store fails, `undo` withdraws it and the client gets
    /// the store's problem, so nothing runs that would not come back.
    private func persist(
        _ kind: PublishedItem.Kind, id: String, adapter: String, definition: [UInt8], owner: ClientID,
        undo: () async -> Void
    ) async throws(Problem) {
        guard let store else { return }
        do throws(StoreError) {
            try await store.savePublished(
                PublishedItem(kind: kind, id: id, adapter: adapter, definition: definition, owner: owner.rawValue))
        } catch {
            await undo()
            throw Self.storeProblem(error)
        }
    }

    private func forget(_ kind: PublishedItem.Kind, id: String) async throws(Problem) {
        guard let store else { return }
        do throws(StoreError) {
            try await store.removePublished(kind, id: id)
        } catch {
            throw Self.storeProblem(error)
        }
    }

    /// Publishes again what the store holds (at start-up), under the same
    /// ids and with the values clients set. What bluetoothd cannot take
    /// now (BlueZ not running yet) is registered when BlueZ becomes
    /// available; a definition this gateway cannot read is skipped.
    public func restorePeripheral() async throws(StoreError) -> (applications: Int, advertisements: Int) {
        guard let store else { return (0, 0) }
        var restored = (applications: 0, advertisements: 0)
        for item in try await store.publishedItems() {
            let failure: BlueZError?
            do throws(Problem) {
                switch item.kind {
                case .application:
                    let definition = try PeripheralJSON.application(JSONBody(json: item.definition, allowed: Self.applicationFields))
                    failure = await peripheral.restore(definition, id: item.id, adapter: item.adapter, values: item.values)
                    quotas.restore(.application, key: item.id, owner: ClientID(stored: item.owner))
                    restored.applications += 1
                case .advertisement:
                    let definition = try PeripheralJSON.advertisement(
                        JSONBody(json: item.definition, allowed: PeripheralJSON.advertisementFields))
                    failure = await peripheral.restore(definition, id: item.id, adapter: item.adapter)
                    quotas.restore(.advertisement, key: item.id, owner: ClientID(stored: item.owner))
                    restored.advertisements += 1
                }
            } catch {
                logger.warning("the state store holds \(item.kind.rawValue) \(item.id), which this gateway cannot read (\(error.detail)): skipped")
                continue
            }
            if let failure {
                logger.warning("\(item.kind.rawValue) \(item.id) on \(item.adapter) is not registered yet: \(failure)")
            }
        }
        return restored
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

    /// Feeds the peripheral's events into its event log.
    func pumpPeripheralEvents() {
        let events = peripheral.events(bufferSize: 16_384)
        peripheralPump.start { [peripheralLog] in
            for await event in events {
                let (type, members) = PeripheralJSON.event(event)
                let now = Date()
                peripheralLog.publish(type: type, device: nil, json: .object([("type", .string(type)), ("timestamp", ModelJSON.timestamp(now))] + members))
            }
        }
    }
}
