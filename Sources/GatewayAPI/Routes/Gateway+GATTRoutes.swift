import BlueZ
import GatewayCore
import HTTPServer

extension Gateway {
    func addGATTRoutes(to router: inout Router) {
        let characteristic = "/v1/devices/{address}/characteristics/{characteristic}"
        let descriptor = characteristic + "/descriptors/{descriptor}"

        router.get("/v1/devices/{address}/services") { [self] request in
            let command = ServicesCommand(device: try commandTarget(request), services: try request.uuidList("service"))
            return .json(CommandJSON.services(try core.services(command)))
        }
        router.get(characteristic) { [self] request in
            let command = CharacteristicCommand(characteristic: try characteristicTarget(request))
            let (found, service) = try core.characteristic(command)
            return .json(CommandJSON.characteristic(found, service: service))
        }
        router.get(characteristic + "/value") { [self] request in
            let target = try characteristicTarget(request)
            let offset = UInt16(try request.integer("offset", in: 0...0xFFFF) ?? 0)
            let encoding = try request.encoding()
            let command = ReadCommand(
                characteristic: target, offset: offset, timeout: try request.timeout(maximum: configuration.maximumTimeout),
                pairing: try request.pairingPolicy())
            let value = try await core.read(command)
            return request.wantsRawBytes ? .bytes(value) : .json(CommandJSON.value(value, encoding: encoding))
        }
        router.put(characteristic + "/value") { [self] request in
            let target = try characteristicTarget(request)
            let write = try request.valueWrite(types: true)
            let command = WriteCommand(
                characteristic: target, value: write.value, type: write.type, offset: write.offset,
                timeout: try request.timeout(maximum: configuration.maximumTimeout), pairing: try request.pairingPolicy())
            try await core.write(command)
            return Response(status: .noContent)
        }
        router.get(characteristic + "/notifications") { [self] request in
            let command = SubscribeCommand(characteristic: try characteristicTarget(request))
            let encoding = try request.encoding()
            let format = try NotificationFormat(parameter: request.query["format"], encoding: encoding)
            let lifetime = try request.streamLifetime()
            let buffering = try streamConfiguration(request)
            // A failure (not connected, cannot notify, ...) is this request's
            // problem: the stream opens only once the subscription is in place.
            let target = NotificationTarget()
            let lease = try await core.subscribe(
                command, sink: NotificationHub.sink(target, encoding: encoding, format: format, log: log))
            let writer = streams.makeWriter(
                .notifications, buffering, lifetime: lifetime,
                lastEvent: NotificationHub.lastEvent(log: log)
            ) { _ in lease.cancel() }
            target.attach(writer)
            return .eventStream(writer)
        }
        router.get(descriptor + "/value") { [self] request in
            let target = try descriptorTarget(request)
            let offset = UInt16(try request.integer("offset", in: 0...0xFFFF) ?? 0)
            let encoding = try request.encoding()
            let command = ReadDescriptorCommand(
                descriptor: target, offset: offset, timeout: try request.timeout(maximum: configuration.maximumTimeout))
            let value = try await core.readDescriptor(command)
            return request.wantsRawBytes ? .bytes(value) : .json(CommandJSON.value(value, encoding: encoding))
        }
        router.put(descriptor + "/value") { [self] request in
            let target = try descriptorTarget(request)
            let write = try request.valueWrite(types: false)
            let command = WriteDescriptorCommand(
                descriptor: target, value: write.value, offset: write.offset,
                timeout: try request.timeout(maximum: configuration.maximumTimeout))
            try await core.writeDescriptor(command)
            return Response(status: .noContent)
        }
    }
}

extension Gateway {
    /// The characteristic of a `…/characteristics/{characteristic}` route,
    /// narrowed by `?service=`, for a core command.
    func characteristicTarget(_ request: Request) throws(Problem) -> CharacteristicTarget {
        let device = try commandTarget(request)
        return CharacteristicTarget(
            device: device, selector: try request.attribute("characteristic", service: try request.serviceQuery()))
    }

    /// The descriptor of a `…/descriptors/{descriptor}` route: its
    /// characteristic (narrowed by `?service=`), then the descriptor.
    func descriptorTarget(_ request: Request) throws(Problem) -> DescriptorTarget {
        let owner = try characteristicTarget(request)
        return DescriptorTarget(characteristic: owner, selector: try request.attribute("descriptor", service: nil))
    }
}

/// A value to write, from a JSON body or raw bytes.
public struct ValueWrite: Sendable {
    public var value: [UInt8]
    public var type: WriteType
    public var offset: UInt16

    /// The value of a JSON object (a write's body, an MQTT write command):
    /// `value` in `encoding`, `type` and `offset`, else those of the query.
    public init(reading json: JSONField, queryType: WriteType? = nil, queryOffset: Int? = nil) throws(Problem) {
        guard let text = try json["value"].string() else {
            throw Problem.invalidParameter("value", "is required (the bytes to write, in `encoding`)")
        }
        let encoding = try ByteEncoding(parameter: try json["encoding"].string())
        let type = try (try json["type"].string()).map { (text) throws(Problem) in try Request.writeType(text) }
        let offset = try json["offset"].int(in: 0...0xFFFF) ?? queryOffset ?? 0
        self.init(value: try encoding.decode(text), type: type ?? queryType ?? .request, offset: UInt16(offset))
    }

    init(value: [UInt8], type: WriteType, offset: UInt16) {
        self.value = value
        self.type = type
        self.offset = offset
    }
}

extension Request {
    /// The value of a `PUT …/value`: a JSON body (`value`, `encoding`,
    /// `type`, `offset`) or raw bytes (`Content-Type:
    /// application/octet-stream`, with `type` and `offset` in the query).
    func valueWrite(types: Bool) throws(Problem) -> ValueWrite {
        let queryType = try query["type"].map { (text) throws(Problem) in try Self.writeType(text) }
        let queryOffset = try integer("offset", in: 0...0xFFFF)
        if headers["Content-Type"]?.lowercased().hasPrefix("application/octet-stream") == true {
            return ValueWrite(value: body, type: queryType ?? .request, offset: UInt16(queryOffset ?? 0))
        }
        let allowed: Set<String> = types ? ["value", "encoding", "type", "offset"] : ["value", "encoding", "offset"]
        return try ValueWrite(reading: try JSONBody(self, allowed: allowed).root, queryType: queryType, queryOffset: queryOffset)
    }

    static func writeType(_ text: String) throws(Problem) -> WriteType {
        do {
            return try WriteCommand.type(text)
        } catch {
            throw Problem(error)
        }
    }
}
