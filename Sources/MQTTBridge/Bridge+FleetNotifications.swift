#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import MQTT

// Notification streams through the fleet (docs/fleet.md, "Notifications
// through the fleet"). The gateway that serves the stream sends a leased
// `subscribe` through `<prefix>/any/cmd/`, follows the answering gateway's
// value topic, renews its leases on `<prefix>/<id>/leases` every third of
// their time to live and gives each back with `unsubscribe` when its client
// leaves. The answering gateway holds one subscription per lease and drops
// it when the lease expires.
extension Bridge {
    /// A lease's time to live when a `subscribe` gives none.
    static let defaultLeaseTime = Duration.seconds(15)

    // MARK: Serving a stream

    public func openNotifications(
        _ command: FleetCommand, timeout: Duration, receive: @escaping @Sendable (FleetStreamEvent) -> Void
    ) async throws(FleetError) -> FleetNotificationOpening {
        guard case .object(let members)? = try? JSON.parse(command.payload) else {
            throw .unavailable("the subscription's payload is not a JSON object")
        }
        let id = servedStreams.withLock { state in
            state.last += 1
            return "\(configuration.gatewayID)/\(state.last)"
        }
        let ttl = configuration.streamLeaseTime
        let leased = members + [("lease", .string(id)), ("ttl_ms", .int(ttl.milliseconds))]
        let answer = try await send(FleetCommand(name: "subscribe", payload: JSON.object(leased).bytes), timeout: timeout)
        guard (200..<300).contains(answer.status) else { return FleetNotificationOpening(answer: answer, stream: nil) }
        let holder = answer.gateway
        let unsubscribe = JSON.object(
            leased.filter { ["address", "characteristic", "service", "adapter", "lease"].contains($0.0) }
        ).bytes
        let object = Self.object(answer.body)
        guard (try? object["lease"].string()) == id, let characteristic = try? object["characteristic"].string(),
            let address = try? object["address"].string()
        else {
            // A gateway that does not know leases made the one shared
            // subscription of the MQTT `subscribe`: leave it to its users.
            throw .unavailable("\(holder) answered without the lease: it does not hold subscriptions for streams")
        }
        let device = Self.canonicalAddress(address)
        let topic = "\(configuration.topicPrefix)/\(holder)/devices/\(device)/characteristics/\(characteristic)"
        let values: Subscription
        do {
            values = try await client.subscribe(topic, qos: configuration.valueQoS, waitForAcknowledgement: true) {
                message in
                guard !message.retain, !message.payload.isEmpty else { return }
                receive(.value(message.payload))
            }
        } catch {
            giveBack(unsubscribe, to: holder)
            throw .unavailable("the holder's value topic could not be followed: \(error)")
        }
        servedStreams.withLock { state in
            state.streams[id] = ServedStream(
                holder: holder, address: device, unsubscribe: unsubscribe, values: values, receive: receive)
        }
        let stream = FleetNotificationStream(gateway: holder) { [weak self] in
            self?.endServedStream(id, event: nil)
        }
        return FleetNotificationOpening(answer: answer, stream: stream)
    }

    /// Ends a stream this gateway serves: stops following its values, gives
    /// its lease back, and tells its client `event` (nil when the client
    /// is the one who left).
    func endServedStream(_ id: String, event: FleetStreamEvent?) {
        guard let stream = servedStreams.withLock({ $0.streams.removeValue(forKey: id) }) else { return }
        client.unsubscribe(stream.values)
        giveBack(stream.unsubscribe, to: stream.holder)
        if let event { stream.receive(event) }
    }

    /// Ends every stream this gateway serves (on stop).
    func endServedStreams(reason: String, detail: String) {
        for id in servedStreams.withLock({ Array($0.streams.keys) }) {
            endServedStream(id, event: .ended(reason: reason, detail: detail))
        }
    }

    /// Sends `unsubscribe` with the lease straight to the gateway that holds
    /// it; nobody waits for the answer (a lost one still ends at the lease's
    /// expiry).
    private func giveBack(_ payload: [UInt8], to holder: String) {
        var user: [UserProperty] = []
        if let key = gateway.configuration.apiKey, !key.isEmpty { user.append(UserProperty(Self.apiKeyProperty, key)) }
        _ = try? client.publish(
            "\(configuration.topicPrefix)/\(holder)/cmd/unsubscribe", payload: payload, qos: .atLeastOnce,
            properties: MessageProperties(
                responseTopic: fleetReplyTopic, correlationData: Array(UUID().uuidString.utf8),
                contentType: "application/json", userProperties: user))
    }

    // MARK: Every tick

    /// Renews the leases of the streams this gateway serves when due, ends
    /// those whose device has left its holder (or whose holder went
    /// offline), and drops the leases held here that have expired.
    func tendLeases(now: ContinuousClock.Instant) {
        let interval = configuration.streamLeaseTime / 3
        let (renewal, ended) = servedStreams.withLock { state -> ([String]?, [(String, String, String)]) in
            guard !state.streams.isEmpty else {
                state.renewed = nil
                return (nil, [])
            }
            var ended: [(String, String, String)] = []
            directory.withLock { directory in
                for (id, stream) in state.streams {
                    if directory.isOffline(stream.holder) {
                        ended.append((id, "gateway-offline", "\(stream.holder), which held the subscription, went offline"))
                    } else if directory.isConnected(stream.holder, device: stream.address) {
                        state.streams[id]?.connectedSeen = true
                    } else if stream.connectedSeen {
                        ended.append((id, "disconnected", "the device disconnected from \(stream.holder)"))
                    }
                }
            }
            guard state.renewed.map({ now - $0 >= interval }) ?? true else { return (nil, ended) }
            state.renewed = now
            return (state.streams.keys.sorted(), ended)
        }
        for (id, reason, detail) in ended { endServedStream(id, event: .ended(reason: reason, detail: detail)) }
        if let renewal {
            let payload = JSON.object([
                ("leases", .array(renewal.map(JSON.string))), ("ttl_ms", .int(configuration.streamLeaseTime.milliseconds)),
            ])
            _ = try? client.publish(topics.leases, payload: payload.bytes, qos: .atLeastOnce, properties: Self.json)
        }
        let expired = heldLeases.withLock { leases in
            let expired = leases.filter { $0.value.expires <= now }.map(\.key)
            for id in expired { leases[id] = nil }
            return expired
        }
        for id in expired {
            subscriptions.withLock { $0.removeValue(forKey: HeldLease.key(id)) }?.cancel()
        }
    }

    // MARK: Holding for others

    /// A serving gateway's renewal: every lease it names that this gateway
    /// holds for it lasts its time to live again. A gateway renews only its
    /// own leases (the lease id's first level is the gateway's id).
    func receiveLeaseRenewal(_ message: Message) {
        guard !message.retain, let serving = Self.level(1, of: message.topic),
            case .array(let ids)? = Self.object(message.payload)["leases"].json
        else { return }
        let now = ContinuousClock.now
        heldLeases.withLock { leases in
            for case .string(let id) in ids {
                guard let lease = leases[id], lease.servingGateway == serving else { continue }
                leases[id]?.expires = now + lease.ttl
            }
        }
    }

    /// Tells the serving gateway that a lease's subscription ended by itself,
    /// on its fleet reply topic: its stream ends with the same reason a
    /// local stream gives.
    func tellLeaseEnded(_ id: String, to serving: String, reason: String, detail: String) {
        let payload = JSON.object([("lease", .string(id)), ("reason", .string(reason)), ("detail", .string(detail))])
        _ = try? client.publish(
            "\(configuration.replyTopicPrefix)\(serving)/fleet", payload: payload.bytes, qos: .atLeastOnce,
            properties: MessageProperties(
                correlationData: Array("lease:\(id)".utf8), contentType: "application/json",
                userProperties: [
                    UserProperty(Self.leaseEndedProperty, id), UserProperty("gateway", configuration.gatewayID),
                ]))
    }

    /// A holder's word that a lease of this gateway's ended: the stream ends
    /// with its reason, if that holder holds it.
    func receiveLeaseEnded(_ id: String, _ message: Message) {
        let holder = message.properties.userProperties.last { $0.name == "gateway" }?.value
        guard servedStreams.withLock({ $0.streams[id]?.holder }) == holder else { return }
        let object = Self.object(message.payload)
        let reason = ((try? object["reason"].string()) ?? nil) ?? "failed"
        let detail = ((try? object["detail"].string()) ?? nil) ?? ""
        endServedStream(id, event: .ended(reason: reason, detail: detail))
    }

    /// The user property of a holder's word that a lease ended.
    static let leaseEndedProperty = "lease-ended"

    /// Renews one lease (a `subscribe` that names a lease this gateway holds).
    func renewLease(_ id: String, now: ContinuousClock.Instant) {
        heldLeases.withLock { leases in
            guard let lease = leases[id] else { return }
            leases[id]?.expires = now + lease.ttl
        }
    }

    /// The leases this gateway holds for other gateways' streams.
    public var heldLeaseCount: Int { heldLeases.withLock { $0.count } }
}
