#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import MQTT

// A fleet of gateways on one broker (docs/mqtt.md, "Fleet"): retained
// presence per device, and commands on `<prefix>/any/cmd/<command>` taken by
// exactly one gateway through claims on `<prefix>/any/claims/<address>`.
extension Bridge {
    /// Fleet requests remembered at once, at most: a flood of them is
    /// ignored past this, not stored.
    static let pendingFleetRequestLimit = 4_096
    /// Extra claim steps a gateway waits when others know the device and it
    /// does not (4 × 500 ms by default).
    static let uninformedClaimSteps = 4

    /// A request to `any` this gateway has seen and not yet seen finished.
    struct FleetRequest: Sendable {
        let message: Message
        let device: String?
        let received: ContinuousClock.Instant
        var started = false
    }

    // MARK: Presence

    /// Publishes this gateway's presence for a device it heard, when due.
    func publishPresence(device: String, adapter: String?, rssi: Int) {
        guard configuration.fleet else { return }
        guard presence.withLock({ $0.offer(device: device, rssi: rssi, now: .now) }) else { return }
        var members = ["\"gateway\":\(Self.quoted(configuration.gatewayID))", "\"address\":\(Self.quoted(device))"]
        if let adapter { members.append("\"adapter\":\(Self.quoted(adapter))") }
        members += ["\"rssi\":\(rssi)", "\"timestamp\":\(Self.quoted(Date().ISO8601Format()))"]
        _ = try? client.publish(
            topics.presence(device), payload: Array("{\(members.joined(separator: ","))}".utf8), qos: .atLeastOnce,
            retain: true, properties: Self.json)
    }

    /// Clears a device's retained presence (it was lost).
    func clearPresence(device: String) {
        guard configuration.fleet, presence.withLock({ $0.forget(device) }) else { return }
        _ = try? client.publish(topics.presence(device), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// Clears every presence this gateway published (on stop).
    func clearAllPresence() {
        for device in presence.withLock({ $0.forgetAll() }) {
            _ = try? client.publish(topics.presence(device), payload: [], qos: .atLeastOnce, retain: true)
        }
    }

    // MARK: Following the fleet

    /// Subscribes to the fleet's status, presence, connection, keep and
    /// claim topics, to this gateway's fleet reply topic and to
    /// `<prefix>/any/cmd/+`. Every handler runs on the MQTT
    /// thread in the broker's order, which is what makes every gateway
    /// agree on claims.
    func followFleet() async throws {
        let prefix = configuration.topicPrefix
        _ = try await client.subscribe("\(prefix)/+/status", qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let gateway = Self.level(1, of: message.topic) else { return }
            let isOnline = message.payloadText == "online"
            self.directory.withLock { directory in
                directory.setStatus(gateway, online: isOnline)
                if !message.retain { directory.seen(gateway, at: Date()) }
            }
            if !message.retain, !message.payload.isEmpty {
                let event = "{\"type\":\"gateway-status\",\"timestamp\":\(Self.quoted(Date().ISO8601Format())),\"status\":\(Self.quoted(message.payloadText))}"
                self.handOver(Message(topic: message.topic, payload: Array(event.utf8)), from: gateway)
            }
            self.noteFleetStatus(gateway, online: isOnline)
            let reopened = self.fleet.withLock { view in
                view.setStatus(gateway, online: isOnline)
                return isOnline ? [] : view.reopen(wonBy: gateway)
            }
            for request in reopened { self.scheduleClaim(request) }
        }
        _ = try await client.subscribe("\(prefix)/+/devices/+/presence", qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let gateway = Self.level(1, of: message.topic), let device = Self.level(3, of: message.topic)
            else { return }
            let object = Self.object(message.payload)
            let rssi = try? object["rssi"].int(in: Int(Int16.min)...Int(Int16.max))
            self.fleet.withLock { $0.setPresence(gateway, device: device, rssi: rssi, now: .now) }
            let date = Self.timestamp(of: object)
            self.directory.withLock { directory in
                directory.setPresence(
                    gateway, device: device, adapter: (try? object["adapter"].string()) ?? nil, rssi: rssi, at: date)
                if rssi != nil { directory.seen(gateway, at: date) }
            }
        }
        _ = try await client.subscribe("\(prefix)/+/devices/+/connection", qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let gateway = Self.level(1, of: message.topic), let device = Self.level(3, of: message.topic)
            else { return }
            let object = Self.object(message.payload)
            let type = try? object["type"].string()
            let isConnected = type == "device-connected" || type == "services-resolved"
            self.fleet.withLock { $0.setConnected(gateway, device: device, isConnected) }
            self.directory.withLock { directory in
                directory.setConnected(gateway, device: device, isConnected)
                if !message.payload.isEmpty { directory.seen(gateway, at: Self.timestamp(of: object)) }
            }
            self.handOver(message, from: gateway)
        }
        _ = try await client.subscribe("\(prefix)/+/devices/+/keep", qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let gateway = Self.level(1, of: message.topic), let device = Self.level(3, of: message.topic)
            else { return }
            let object = Self.object(message.payload)
            let keeping =
                message.payload.isEmpty
                ? nil
                : FleetDirectory.Keeping(
                    adapter: (try? object["adapter"].string()) ?? nil, status: (try? object["status"].string()) ?? nil)
            self.directory.withLock { $0.setKept(gateway, device: device, keeping) }
        }
        _ = try await client.subscribe(topics.fleetSlots, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveSlots(message)
        }
        _ = try await client.subscribe(fleetReplyTopic, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveFleetReply(message)
        }
        _ = try await client.subscribe(topics.fleetClaims, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveClaim(message)
        }
        try await followFleetKeeps()
        guard configuration.commands else { return }
        _ = try await client.subscribe(topics.fleetLeases, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveLeaseRenewal(message)
        }
        _ = try await client.subscribe(topics.fleetCommands, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveFleetRequest(message)
        }
    }

    private func receiveFleetRequest(_ message: Message) {
        // Retained requests are old news.
        guard !message.retain else { return }
        let key = Self.requestKey(message)
        // A payload over the limit is not read here: the winner answers 413.
        let device =
            message.payload.count > configuration.commandPayloadLimit
            ? nil : (try? Self.object(message.payload)["address"].string()).map(Self.canonicalAddress)
        let kept = fleetRequests.withLock { requests -> Bool in
            guard requests.count < Self.pendingFleetRequestLimit else { return false }
            requests[key] = FleetRequest(message: message, device: device, received: .now)
            return true
        }
        guard kept else {
            floodLog.note("\(Self.pendingFleetRequestLimit) fleet requests are pending: \(message.topic) ignored")
            return
        }
        scheduleClaim(key)
    }

    /// Claims `request` after this gateway's turn (its rank for the device
    /// times `claimStep`) unless another gateway's claim arrives first.
    func scheduleClaim(_ request: String) {
        guard let pending = fleetRequests.withLock({ $0[request] }) else { return }
        let me = configuration.gatewayID
        let place = fleet.withLock { view -> (rank: Int, informed: Int)? in
            guard view.winner(of: request) == nil, !view.isFinished(request) else { return nil }
            let now = ContinuousClock.now
            let order = view.ranking(for: pending.device, now: now)
            return (order.firstIndex(of: me) ?? order.count, view.informedCount(for: pending.device, now: now))
        }
        guard let place else { return }
        let rank = place.rank
        // A gateway that does not know the device stands back further when
        // some gateway does: a loaded machine that hears the device must not
        // lose the claim to one that cannot reach it by one step's lateness.
        let standBack = place.informed > 0 && rank >= place.informed ? Self.uninformedClaimSteps : 0
        let delay = configuration.claimStep * (rank + standBack)
        Task { [weak self] in
            if rank > 0 { try? await Task.sleep(for: delay) }
            guard let self else { return }
            let open = self.fleet.withLock { $0.winner(of: request) == nil && !$0.isFinished(request) }
            guard open else { return }
            self.publishClaim(request, device: pending.device, done: false)
        }
    }

    private func publishClaim(_ request: String, device: String?, done: Bool) {
        var json = "{\"request\":\(Self.quoted(request)),\"gateway\":\(Self.quoted(configuration.gatewayID))"
        if done { json += ",\"done\":true" }
        json += "}"
        _ = try? client.publish(
            topics.fleetClaim(device), payload: Array(json.utf8), qos: .atLeastOnce, properties: Self.json)
    }

    private func receiveClaim(_ message: Message) {
        let object = Self.object(message.payload)
        guard let request = try? object["request"].string(), let gateway = try? object["gateway"].string() else { return }
        let now = ContinuousClock.now
        if (try? object["done"].bool()) == true {
            fleet.withLock { $0.finish(request, now: now) }
            fleetRequests.withLock { $0[request] = nil }
            return
        }
        let device = Self.level(3, of: message.topic).flatMap { $0 == "none" ? nil : $0 }
        let winner = fleet.withLock { $0.claim(request, by: gateway, device: device, now: now) }
        guard winner == configuration.gatewayID else { return }
        let mine = fleetRequests.withLock { requests -> FleetRequest? in
            guard var pending = requests[request], !pending.started else { return nil }
            pending.started = true
            requests[request] = pending
            return pending
        }
        guard let mine else { return }
        receiveCommand(mine.message) { [weak self] in self?.publishClaim(request, device: mine.device, done: true) }
    }

    /// Forgets requests and claims no requester still waits for.
    func expireFleetRequests(now: ContinuousClock.Instant) {
        let age = configuration.fleetRequestLifetime
        _ = fleet.withLock { $0.expire(olderThan: age, now: now) }
        fleetRequests.withLock { requests in
            requests = requests.filter { now - $0.value.received <= age }
        }
    }

    // MARK: Helpers

    /// The same for every gateway that received the same request.
    static func requestKey(_ message: Message) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            hash ^= 0xff
            hash = hash &* 0x100_0000_01b3
        }
        mix(message.topic.utf8)
        mix((message.properties.responseTopic ?? "").utf8)
        mix(message.properties.correlationData ?? [])
        mix(message.payload)
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func canonicalAddress(_ text: String) -> String {
        String(text.uppercased().map { $0 == "-" ? ":" : $0 })
    }

    static func level(_ index: Int, of topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        return levels.indices.contains(index) ? String(levels[index]) : nil
    }

    /// Another gateway's message, read leniently: a payload that is not
    /// JSON has no fields, and a field of the wrong kind is ignored.
    static func object(_ payload: [UInt8]) -> JSONField {
        JSONField(json: payload.isEmpty ? nil : try? JSON.parse(payload))
    }

    static func quoted(_ text: String) -> String { JSON.string(text).text }
}
