#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import GatewayAPI
import GatewayCore
import MQTT

// Commands on `<prefix>/<id>/cmd/<command>`: a JSON object in, read into the
// core's typed command; the core's result out as the JSON the REST route for
// the same operation answers (or its problem JSON), on the request's response
// topic with its correlation data.
extension Bridge {
    /// The commands (each the operation of a REST route).
    static let commandNames = [
        "connect", "disconnect", "read", "write", "subscribe", "unsubscribe", "keep", "keep-status", "unkeep",
        "services", "characteristic", "read-descriptor", "write-descriptor",
    ]
    /// The user property that carries the API key when the gateway has one.
    static let apiKeyProperty = "api-key"

    /// Takes a command, on the MQTT thread: refuses at once what is too
    /// large, unauthorised, addressed to a reply topic outside
    /// `replyTopicPrefix`, or beyond the command gate's bound; runs the rest
    /// in a task of its own, in its turn.
    func receiveCommand(_ message: Message, then finished: (@Sendable () -> Void)? = nil) {
        let command = String(message.topic.split(separator: "/").last ?? "")
        if let refusal = refusal(of: message) {
            reply(to: message, command: command, with: refusal)
            finished?()
            return
        }
        guard commandGate.enter() else {
            floodLog.note("MQTT commands are arriving faster than they run: refused with 503 (\(message.topic))")
            let retryAfter = max(1, Int(configuration.commandQueueTimeout.components.seconds) / 10)
            reply(
                to: message, command: command,
                with: problem(
                    .unavailable(
                        "\(configuration.commandConcurrency) commands are running and \(configuration.commandQueueLength) waiting; ask again in \(retryAfter) s",
                        instance: message.topic)),
                extra: [UserProperty("retry-after", String(retryAfter))])
            finished?()
            return
        }
        let deadline = ContinuousClock.now + configuration.commandQueueTimeout
        Task {
            let answer = await commandGate.run(deadline: deadline) {
                await self.answer(command, message.payload, instance: message.topic)
            }
            reply(
                to: message, command: command,
                with: answer
                    ?? problem(.unavailable("the command waited its turn for too long", instance: message.topic)))
            finished?()
        }
    }

    /// Why `message` is refused before it is read, if it is.
    private func refusal(of message: Message) -> CommandReply? {
        if let topic = message.properties.responseTopic, !isAllowedReplyTopic(topic) {
            return problem(
                .invalidRequest(
                    "the response topic must be under \(configuration.replyTopicPrefix) (not '\(topic)')",
                    instance: message.topic))
        }
        if message.payload.count > configuration.commandPayloadLimit {
            return problem(
                .payloadTooLarge(
                    "the payload is \(message.payload.count) bytes; commands take at most \(configuration.commandPayloadLimit)",
                    instance: message.topic))
        }
        let key = message.properties.userProperties.last { $0.name == Self.apiKeyProperty }?.value
        if !gateway.acceptsAPIKey(key) {
            floodLog.note("MQTT command without a valid API key refused (\(message.topic))")
            return problem(
                .unauthorized(
                    "this gateway has an API key: send it in the user property '\(Self.apiKeyProperty)'",
                    instance: message.topic))
        }
        return nil
    }

    /// Under `replyTopicPrefix`, one level at least below it, no wildcard.
    func isAllowedReplyTopic(_ topic: String) -> Bool {
        let prefix = configuration.replyTopicPrefix
        return topic.hasPrefix(prefix) && topic.count > prefix.count && !topic.contains(where: { "+#".contains($0) })
    }

    private func reply(
        to message: Message, command: String, with answer: CommandReply, extra: [UserProperty] = []
    ) {
        let topic = message.properties.responseTopic.flatMap { isAllowedReplyTopic($0) ? $0 : nil }
            ?? topics.response(Self.commandNames.contains(command) ? command : "unknown")
        _ = try? client.publish(
            topic, payload: answer.body, qos: .atLeastOnce,
            properties: MessageProperties(
                correlationData: message.properties.correlationData, contentType: answer.contentType,
                userProperties: [
                    UserProperty("status", String(answer.status)), UserProperty("gateway", configuration.gatewayID),
                ] + extra))
    }

    private func answer(_ command: String, _ payload: [UInt8], instance: String) async -> CommandReply {
        guard Self.commandNames.contains(command) else {
            return problem(.notFound("unknown command '\(command)' (one of \(Self.commandNames.joined(separator: ", ")))", instance: instance))
        }
        let object: JSONField
        do {
            object = JSONField(json: try JSON.parse(payload))
        } catch {
            return problem(.invalidRequest("the payload is not JSON", instance: instance))
        }
        guard case .object = object.json else {
            return problem(.invalidRequest("the payload must be a JSON object", instance: instance))
        }
        do {
            return try await answer(command, object, instance: instance)
        } catch {
            return problem(for: error, instance: instance)
        }
    }

    /// Runs `command` with the fields of its payload, a JSON object. The
    /// payload's own mistakes are problems for the command's topic; what
    /// follows (the values read into a typed command, and the core running
    /// it) fails as the REST route would, for the route's path.
    private func answer(_ command: String, _ object: JSONField, instance: String) async throws(Problem) -> CommandReply {
        guard let address = try object["address"].string() else {
            throw Problem.invalidParameter("address", "is required (AA:BB:CC:DD:EE:FF)")
        }
        let adapter = try object["adapter"].string()
        var milliseconds: Int?
        if object["timeout_ms"].json != nil {
            guard let value = try? object["timeout_ms"].int(in: 1...Int.max) else {
                throw Problem.invalidParameter("timeout_ms", "must be a positive whole number of milliseconds")
            }
            milliseconds = value
        }
        let core = gateway.core
        let device = "/v1/devices/\(Self.escaped(address))"
        func target() throws(GatewayCommandError) -> DeviceTarget { try DeviceTarget(parsing: address, adapter: adapter) }

        switch command {
        case "connect":
            return await run(for: "\(device)/connect") {
                let command = ConnectCommand(device: try target(), timeout: try core.timeout(milliseconds: milliseconds))
                return .json(CommandJSON.device(try await core.connect(command)))
            }
        case "disconnect":
            return await run(for: "\(device)/disconnect") {
                let command = DisconnectCommand(device: try target(), timeout: try core.timeout(milliseconds: milliseconds))
                return .json(CommandJSON.device(try await core.disconnect(command)))
            }
        case "keep":
            return await run(for: "\(device)/keep") { [gateway] in
                let command = try Gateway.keepCommand(try target(), reading: object)
                let (status, json) = CommandJSON.keep(try await core.keep(command, owner: gateway.inProcessOwner))
                return .json(json, status: status)
            }
        case "keep-status":
            return await run(for: "\(device)/keep") {
                .json(CommandJSON.kept(try core.keepStatus(KeepStatusCommand(device: try target()))))
            }
        case "unkeep":
            let fleet = try object["fleet"].bool() == true
            return await run(for: "\(device)/keep") {
                try await core.unkeep(UnkeepCommand(device: try target(), fleet: fleet))
                return .noContent
            }
        case "services":
            let texts = try Self.serviceTexts(in: object)
            return await run(for: "\(device)/services") {
                let command = ServicesCommand(device: try target(), services: try ServicesCommand.services(parsing: texts))
                return .json(CommandJSON.services(try core.services(command)))
            }
        case "read", "write", "subscribe", "unsubscribe", "characteristic", "read-descriptor", "write-descriptor":
            guard let characteristic = try object["characteristic"].string() else {
                throw Problem.invalidParameter("characteristic", "is required (a UUID or handle:N)")
            }
            let service = try object["service"].string()
            if command == "subscribe" || command == "unsubscribe" {
                let lease = try Self.lease(in: object)
                return await notifications(
                    command == "subscribe", address: address, characteristic: characteristic, service: service,
                    adapter: adapter, lease: lease, instance: instance)
            }
            func characteristicTarget() throws(GatewayCommandError) -> CharacteristicTarget {
                try CharacteristicTarget(device: try target(), parsing: characteristic, service: service)
            }
            let characteristicPath = "\(device)/characteristics/\(Self.escaped(characteristic))"
            if command == "characteristic" {
                return await run(for: characteristicPath) {
                    let (found, service) = try core.characteristic(CharacteristicCommand(characteristic: try characteristicTarget()))
                    return .json(CommandJSON.characteristic(found, service: service))
                }
            }
            if command == "read-descriptor" || command == "write-descriptor" {
                return try await descriptor(
                    command == "read-descriptor", object, characteristicPath: characteristicPath,
                    timeout: milliseconds, characteristicTarget)
            }
            let path = "\(characteristicPath)/value"
            let pairing = try object["pair"].string()
            if command == "read" {
                let encoding = try object["encoding"].string()
                return await run(for: path) {
                    let target = try characteristicTarget()
                    let encoding = try ByteEncoding(parameter: encoding)
                    let command = ReadCommand(
                        characteristic: target, timeout: try core.timeout(milliseconds: milliseconds),
                        pairing: try PairingPolicy(parsing: pairing))
                    return .json(CommandJSON.value(try await core.read(command), encoding: encoding))
                }
            }
            return await run(for: path) {
                let target = try characteristicTarget()
                let write = try ValueWrite(reading: object)
                try await core.write(
                    WriteCommand(
                        characteristic: target, value: write.value, type: write.type, offset: write.offset,
                        timeout: try core.timeout(milliseconds: milliseconds), pairing: try PairingPolicy(parsing: pairing)))
                return .noContent
            }
        default:
            throw Problem(.notFound, status: .notFound, detail: "unknown command '\(command)'")
        }
    }

    /// `read-descriptor` and `write-descriptor`: `descriptor` (a UUID or
    /// `handle:N`) of the characteristic; `offset`, and `encoding` of the
    /// value read or written; a write has no `type` (BlueZ writes
    /// descriptors with a response).
    private func descriptor(
        _ reading: Bool, _ object: JSONField, characteristicPath: String, timeout milliseconds: Int?,
        _ characteristicTarget: () throws(GatewayCommandError) -> CharacteristicTarget
    ) async throws(Problem) -> CommandReply {
        guard let descriptor = try object["descriptor"].string() else {
            throw Problem.invalidParameter("descriptor", "is required (a UUID or handle:N)")
        }
        let core = gateway.core
        let path = "\(characteristicPath)/descriptors/\(Self.escaped(descriptor))/value"
        func target() throws(GatewayCommandError) -> DescriptorTarget {
            try DescriptorTarget(characteristic: try characteristicTarget(), parsing: descriptor)
        }
        if reading {
            let encoding = try object["encoding"].string()
            let offset = try object["offset"].int(in: 0...0xFFFF) ?? 0
            return await run(for: path) {
                let target = try target()
                let encoding = try ByteEncoding(parameter: encoding)
                let command = ReadDescriptorCommand(
                    descriptor: target, offset: UInt16(offset), timeout: try core.timeout(milliseconds: milliseconds))
                return .json(CommandJSON.value(try await core.readDescriptor(command), encoding: encoding))
            }
        }
        if object["type"].json != nil {
            throw Problem.invalidParameter("type", "descriptors have no write type (BlueZ writes them with a response)")
        }
        return await run(for: path) {
            let target = try target()
            let write = try ValueWrite(reading: object)
            try await core.writeDescriptor(
                WriteDescriptorCommand(
                    descriptor: target, value: write.value, offset: write.offset,
                    timeout: try core.timeout(milliseconds: milliseconds)))
            return .noContent
        }
    }

    /// The `service` of a `services` command: a UUID, several separated by
    /// commas (as `?service=` takes them), or an array of those; none for
    /// every service.
    private static func serviceTexts(in object: JSONField) throws(Problem) -> [String] {
        switch object["service"].json {
        case nil, .null?: return []
        case .array?: return try object["service"].strings() ?? []
        default: return [try object["service"].string()].compactMap { $0 }
        }
    }

    /// Runs a command's typed part; a failure is the problem the REST route
    /// at `path` answers (its `instance`).
    private func run(for path: String, _ body: () async throws -> CommandReply) async -> CommandReply {
        do {
            return try await body()
        } catch {
            return problem(for: error, instance: path)
        }
    }

    /// `subscribe`: the characteristic's values go to
    /// `…/devices/<address>/characteristics/<uuid>` until `unsubscribe`, the
    /// device disconnects, or the bridge stops. Subscribing twice is one
    /// subscription.
    ///
    /// With a `lease` (docs/fleet.md, "Notifications through the fleet"):
    /// a subscription of its own, for another gateway's stream, that lasts
    /// until `unsubscribe` with the same lease, the lease's `ttl_ms` without
    /// a renewal, or the device's disconnection; ending it ends no other
    /// subscription. Subscribing again with the lease renews it.
    private func notifications(
        _ subscribe: Bool, address: String, characteristic: String, service: String?, adapter: String?,
        lease: (id: String, ttl: Duration)? = nil, instance: String
    ) async -> CommandReply {
        let key =
            lease.map { HeldLease.key($0.id) }
            ?? [address.uppercased(), characteristic.lowercased(), service?.lowercased() ?? "", adapter ?? ""]
            .joined(separator: "|")
        guard subscribe else {
            if let lease { _ = heldLeases.withLock { $0.removeValue(forKey: lease.id) } }
            let task = subscriptions.withLock { $0.removeValue(forKey: key) }
            task?.cancel()
            return .json(.object([("subscribed", .bool(false))]))
        }
        if subscriptions.withLock({ $0[key] != nil }) {
            if let lease { renewLease(lease.id, now: .now) }
            return .json(.object([("subscribed", .bool(true))]))
        }
        let subscription: NotificationSubscription
        do {
            let target = try CharacteristicTarget(
                device: try DeviceTarget(parsing: address, adapter: adapter), parsing: characteristic, service: service)
            subscription = try await gateway.core.subscribe(SubscribeCommand(characteristic: target))
        } catch {
            return problem(for: error, instance: instance)
        }
        // Values reach MQTT through the event feed; this task only keeps
        // the subscription open until it ends or is cancelled.
        let task = Task { [weak self] in
            var end: (reason: String, detail: String)?
            do {
                for try await _ in subscription {}
            } catch {
                end = Gateway.subscriptionEnded(by: error)
            }
            guard let self else { return }
            _ = self.subscriptions.withLock { $0.removeValue(forKey: key) }
            // A lease given back or expired is gone already; one whose
            // subscription ended by itself (the device disconnected, the
            // characteristic went away) is told to its serving gateway.
            if let lease, let held = self.heldLeases.withLock({ $0.removeValue(forKey: lease.id) }),
                let end, !Task.isCancelled
            {
                self.tellLeaseEnded(lease.id, to: held.servingGateway, reason: end.reason, detail: end.detail)
            }
        }
        if let lease, let serving = lease.id.split(separator: "/").first {
            heldLeases.withLock {
                $0[lease.id] = HeldLease(servingGateway: String(serving), ttl: lease.ttl, expires: .now + lease.ttl)
            }
        }
        let previous = subscriptions.withLock { subscriptions -> Task<Void, Never>? in
            defer { subscriptions[key] = task }
            return subscriptions[key]
        }
        previous?.cancel()
        guard let lease else { return .json(.object([("subscribed", .bool(true))])) }
        // The serving gateway follows the value topic this names.
        var members: [(String, JSON)] = [
            ("subscribed", .bool(true)), ("lease", .string(lease.id)),
            ("ttl_ms", .int(lease.ttl.milliseconds)),
            ("address", .string(subscription.device.description)), ("adapter", .string(subscription.adapter)),
            ("characteristic", .string(subscription.characteristic.uuid.uuidString)),
        ]
        if let service { members.append(("service", .string(service))) }
        return .json(.object(members))
    }

    /// The `lease` and `ttl_ms` of a `subscribe` or `unsubscribe`: a lease
    /// id is `<serving gateway>/<stream>`; its time to live is 1 s to 10 min,
    /// `defaultLeaseTime` without one.
    private static func lease(in object: JSONField) throws(Problem) -> (id: String, ttl: Duration)? {
        guard let id = try object["lease"].string() else {
            if object["ttl_ms"].json != nil { throw Problem.invalidParameter("ttl_ms", "is for a lease: give `lease` too") }
            return nil
        }
        let levels = id.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 2, levels.allSatisfy({ !$0.isEmpty }), id.count <= 200,
            !id.contains(where: { "+#".contains($0) })
        else {
            throw Problem.invalidParameter("lease", "must be <gateway>/<stream> (no + or #, at most 200 characters)")
        }
        guard object["ttl_ms"].json != nil else { return (id, defaultLeaseTime) }
        guard let milliseconds = try? object["ttl_ms"].int(in: 1_000...600_000) else {
            throw Problem.invalidParameter("ttl_ms", "must be 1000 to 600000 milliseconds")
        }
        return (id, .milliseconds(milliseconds))
    }

    private func problem(_ problem: BridgeProblem) -> CommandReply {
        .problem(problem)
    }

    /// The one place a command's failure becomes its problem JSON: the
    /// payload's own mistakes and GatewayAPI's problems as they are, the
    /// core's typed errors through GatewayAPI's table (`Problem(_:)`).
    private func problem(for error: any Error, instance: String) -> CommandReply {
        let problem: Problem =
            switch error {
            case let problem as Problem: problem
            case let error as GatewayCommandError: Problem(error)
            default: Problem(.internalError, status: .internalServerError, detail: "\(error)")
            }
        // As the HTTP door logs its 5xx: a few per interval.
        if problem.status.code >= 500 { floodLog.note("MQTT command for \(instance) -> \(problem.status.code): \(problem.detail)") }
        return .problem(BridgeProblem(problem, instance: instance))
    }

    /// One path segment of the REST route a command stands for (its
    /// problems' `instance`), as a client escapes it: RFC 3986's
    /// unreserved characters and `!$&'()*+,;=:@` as they are, every other
    /// UTF-8 byte as `%XX` (FoundationEssentials has no percent encoding).
    private static func escaped(_ text: String) -> String {
        let kept = Set("!$&'()*+,;=:@".utf8)
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where kept.contains(byte):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
