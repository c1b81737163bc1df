#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import MQTT

// Commands on `<prefix>/<id>/cmd/<command>`: a JSON object in, the REST
// route's answer out (its JSON, or its problem JSON), on the request's
// response topic with its correlation data.
extension Bridge {
    /// The commands and the REST routes they stand for.
    static let commandNames = [
        "connect", "disconnect", "read", "write", "subscribe", "unsubscribe", "keep", "keep-status", "unkeep",
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
    private func refusal(of message: Message) -> LocalAPI.Answer? {
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
        to message: Message, command: String, with answer: LocalAPI.Answer, extra: [UserProperty] = []
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

    private func answer(_ command: String, _ payload: [UInt8], instance: String) async -> LocalAPI.Answer {
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
            return problem(BridgeProblem(error, instance: instance))
        }
    }

    /// Runs `command` with the fields of its payload, a JSON object.
    private func answer(_ command: String, _ object: JSONField, instance: String) async throws(Problem) -> LocalAPI.Answer {
        guard let address = try object["address"].string() else {
            throw Problem.invalidParameter("address", "is required (AA:BB:CC:DD:EE:FF)")
        }
        let adapter = try object["adapter"].string()
        var query: [(String, String)] = []
        if let adapter { query.append(("adapter", adapter)) }
        if object["timeout_ms"].json != nil {
            guard let milliseconds = try? object["timeout_ms"].int(in: 1...Int.max) else {
                throw Problem.invalidParameter("timeout_ms", "must be a positive whole number of milliseconds")
            }
            query.append(("timeout_ms", String(milliseconds)))
        }
        let device = "/v1/devices/\(Self.escaped(address))"

        switch command {
        case "connect", "disconnect":
            return await api.send("POST", "\(device)/\(command)" + Self.queryString(query))
        case "keep":
            // The keep route reads these fields itself, with its own 400s.
            let body = ["max_attempts", "label", "fleet", "pin", "prefer", "subscriptions"].compactMap { key in
                object[key].json.map { (key, $0) }
            }
            return await api.send("PUT", "\(device)/keep" + Self.queryString(query), json: JSON.object(body).bytes)
        case "keep-status":
            return await api.send("GET", "\(device)/keep" + Self.queryString(query))
        case "unkeep":
            if try object["fleet"].bool() == true { query.append(("fleet", "true")) }
            return await api.send("DELETE", "\(device)/keep" + Self.queryString(query))
        case "read", "write", "subscribe", "unsubscribe":
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
            if let service { query.append(("service", service)) }
            let path = "\(device)/characteristics/\(Self.escaped(characteristic))/value"
            if command == "read" {
                if let encoding = try object["encoding"].string() { query.append(("encoding", encoding)) }
                return await api.send("GET", path + Self.queryString(query))
            }
            // The write route reads these fields itself, with its own 400s.
            let body = ["value", "encoding", "type", "offset"].compactMap { key in object[key].json.map { (key, $0) } }
            return await api.send("PUT", path + Self.queryString(query), json: JSON.object(body).bytes)
        default:
            throw Problem(.notFound, status: .notFound, detail: "unknown command '\(command)'")
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
    ) async -> LocalAPI.Answer {
        let key =
            lease.map { HeldLease.key($0.id) }
            ?? [address.uppercased(), characteristic.lowercased(), service?.lowercased() ?? "", adapter ?? ""]
            .joined(separator: "|")
        guard subscribe else {
            if let lease { _ = heldLeases.withLock { $0.removeValue(forKey: lease.id) } }
            let task = subscriptions.withLock { $0.removeValue(forKey: key) }
            task?.cancel()
            return LocalAPI.Answer(
                status: 200, contentType: "application/json",
                body: Array(#"{"subscribed":false}"#.utf8))
        }
        if subscriptions.withLock({ $0[key] != nil }) {
            if let lease { renewLease(lease.id, now: .now) }
            return LocalAPI.Answer(status: 200, contentType: "application/json", body: Array(#"{"subscribed":true}"#.utf8))
        }
        let result = await gateway.subscribeForBridge(
            address: address, characteristic: characteristic, service: service, adapter: adapter, instance: instance)
        switch result {
        case .failure(let failure):
            return problem(failure)
        case .success(let subscription):
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
            guard let lease else {
                return LocalAPI.Answer(status: 200, contentType: "application/json", body: Array(#"{"subscribed":true}"#.utf8))
            }
            // The serving gateway follows the value topic this names.
            var members: [(String, JSON)] = [
                ("subscribed", .bool(true)), ("lease", .string(lease.id)),
                ("ttl_ms", .int(lease.ttl.milliseconds)),
                ("address", .string(subscription.device.description)), ("adapter", .string(subscription.adapter)),
                ("characteristic", .string(subscription.characteristic.uuid.uuidString)),
            ]
            if let service { members.append(("service", .string(service))) }
            return LocalAPI.Answer(status: 200, contentType: "application/json", body: JSON.object(members).bytes)
        }
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

    private func problem(_ problem: BridgeProblem) -> LocalAPI.Answer {
        LocalAPI.Answer(status: problem.status, contentType: "application/problem+json", body: problem.json)
    }

    /// One path segment: Foundation's `urlPathAllowed` less `/`, `?` and `#`.
    private static func escaped(_ text: String) -> String {
        percentEncoded(text, keeping: "!$&'()*+,;=:@")
    }

    private static func queryString(_ items: [(String, String)]) -> String {
        guard !items.isEmpty else { return "" }
        // Foundation's `urlQueryAllowed` less `&`, `=`, `+` and `#`.
        return "?" + items.map { "\($0.0)=\(percentEncoded($0.1, keeping: "!$'()*,;:@/?"))" }.joined(separator: "&")
    }

    /// `text` with every UTF-8 byte other than RFC 3986's unreserved
    /// characters and `keeping` written as `%XX` (FoundationEssentials has
    /// no CharacterSet-based percent encoding).
    private static func percentEncoded(_ text: String, keeping: String) -> String {
        let kept = Set(keeping.utf8)
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
