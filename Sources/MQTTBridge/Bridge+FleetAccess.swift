import AsyncPrimitives
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import MQTT

// The fleet as this gateway's `/v1/fleet/…` routes see it (docs/fleet.md):
// the directory built from what the gateways publish, commands sent to
// `<prefix>/any/cmd/<command>` with this gateway's reply topic, and the
// gateways' events followed on demand.
extension Bridge: FleetAccess {
    public func gateways() -> [FleetGateway] {
        directory.withLock { $0.gateways(me: configuration.gatewayID, now: Date()) }
    }

    public func devices() -> [FleetDevice] {
        var devices = directory.withLock { $0.devices(now: Date()) }
        let listed = Set(devices.map(\.address))
        for address in fleetKeptAddresses().subtracting(listed) {
            devices.append(FleetDevice(address: address, heardBy: [], connectedOn: [], keptBy: []))
        }
        for index in devices.indices {
            let (wish, record) = fleetKeepState(devices[index].address)
            devices[index].fleetKeep = wish
            devices[index].owner = record.owner
            devices[index].ownerEpoch = record.epoch
        }
        return devices.sorted { $0.address < $1.address }
    }

    /// Publishes `command` to `<prefix>/any/cmd/<name>` (QoS 1, with this
    /// gateway's API key if it has one) and waits for the answer on
    /// `fleetReplyTopic` with the same correlation data.
    public func send(_ command: FleetCommand, timeout: Duration) async throws(FleetError) -> FleetAnswer {
        guard configuration.fleet else { throw .unavailable("this gateway's MQTT bridge runs without the fleet") }
        guard client.configuration.protocolVersion == .v5 else {
            // MQTT 3.1.1 carries no response topic nor correlation data.
            throw .unavailable("fleet commands need MQTT 5 (this bridge speaks 3.1.1)")
        }
        guard client.connectionState.isConnected else { throw .unavailable("this gateway is not connected to the MQTT broker") }
        let correlation = Array(UUID().uuidString.utf8)
        let promise = Promise<FleetAnswer, FleetError>()
        fleetReplies.withLock { $0[correlation] = promise }
        defer { fleetReplies.withLock { $0[correlation] = nil } }
        var user: [UserProperty] = []
        if let key = gateway.configuration.apiKey, !key.isEmpty { user.append(UserProperty(Self.apiKeyProperty, key)) }
        // A request nobody took by its deadline is of no use to anyone: the
        // broker drops it rather than handing it to a gateway connecting later.
        let expiry = UInt32(clamping: timeout.components.seconds + 1)
        do {
            try client.publish(
                "\(configuration.topicPrefix)/any/cmd/\(command.name)", payload: command.payload, qos: .atLeastOnce,
                properties: MessageProperties(
                    responseTopic: fleetReplyTopic, correlationData: correlation, contentType: "application/json",
                    messageExpiryInterval: expiry, userProperties: user))
        } catch {
            throw .unavailable("the command could not be published: \(error)")
        }
        let result = await promise.wait(
            deadline: .now + timeout, timeout: .timeout, cancelled: .unavailable("the request was cancelled"))
        return try result.get()
    }

    /// Subscribes to the gateways' event topics that the fleet does not
    /// already follow; the status and connection handlers hand theirs over
    /// once `sink` is set. Retained messages are old news, not events.
    public func followEvents(_ sink: @escaping @Sendable (FleetEvent) -> Void) async throws(FleetError) {
        guard configuration.fleet else { throw .unavailable("this gateway's MQTT bridge runs without the fleet") }
        eventSink.withLock { $0 = sink }
        let prefix = configuration.topicPrefix
        let filters = [
            "\(prefix)/+/devices/+/advertisement", "\(prefix)/+/devices/+/lost",
            "\(prefix)/+/devices/+/characteristics/+", "\(prefix)/+/adapters/+/state", "\(prefix)/+/bluez",
        ]
        do {
            for filter in filters {
                _ = try await client.subscribe(filter, qos: .atLeastOnce, waitForAcknowledgement: false) {
                    [weak self] message in
                    // `any` and `replies` are the fleet's own levels, not gateways.
                    guard let self, let gateway = Self.level(1, of: message.topic), gateway != "any",
                        gateway != "replies"
                    else { return }
                    self.directory.withLock { $0.seen(gateway, at: Date()) }
                    self.handOver(message, from: gateway)
                }
            }
        } catch {
            throw .unavailable("the fleet's event topics could not be followed: \(error)")
        }
    }

    /// Gives a live event from `gateway` to the events sink, if one is set.
    func handOver(_ message: Message, from gateway: String) {
        guard !message.retain, !message.payload.isEmpty, let sink = eventSink.withLock({ $0 }) else { return }
        sink(FleetEvent(gateway: gateway, json: message.payload))
    }

    /// Where answers to this gateway's fleet commands come back.
    var fleetReplyTopic: String { "\(configuration.replyTopicPrefix)\(configuration.gatewayID)/fleet" }

    func receiveFleetReply(_ message: Message) {
        if let lease = message.properties.userProperties.last(where: { $0.name == Self.leaseEndedProperty })?.value {
            receiveLeaseEnded(lease, message)
            return
        }
        guard let correlation = message.properties.correlationData,
            let promise = fleetReplies.withLock({ $0[correlation] })
        else { return }
        let properties = message.properties.userProperties
        // An answer without a status is not one of ours to read: a 502.
        let status = properties.last { $0.name == "status" }.flatMap { Int($0.value) } ?? 502
        let gateway = properties.last { $0.name == "gateway" }?.value ?? "unknown"
        promise.resolve(
            .success(
                FleetAnswer(
                    gateway: gateway, status: status, contentType: message.properties.contentType,
                    body: message.payload)))
    }

    // MARK: Keep state

    /// Publishes what changed in the devices this gateway keeps, on
    /// `<base>/devices/<address>/keep` (retained; cleared when released).
    func publishKeepChanges() {
        guard configuration.fleet else { return }
        var current: [String: String] = [:]
        for kept in gateway.keeper.keptDevices() {
            current[kept.address.description] =
                "{\"gateway\":\(Self.quoted(configuration.gatewayID)),\"address\":\(Self.quoted(kept.address.description)),\"adapter\":\(Self.quoted(kept.adapter)),\"status\":\(Self.quoted(kept.status.rawValue))}"
        }
        let (changed, released) = publishedKeeps.withLock { published in
            let changed = current.filter { published[$0.key] != $0.value }
            let released = published.keys.filter { current[$0] == nil }
            published = current
            return (changed, released)
        }
        for (device, json) in changed {
            _ = try? client.publish(
                topics.keep(device), payload: Array(json.utf8), qos: .atLeastOnce, retain: true, properties: Self.json)
        }
        for device in released {
            _ = try? client.publish(topics.keep(device), payload: [], qos: .atLeastOnce, retain: true)
        }
    }

    /// Clears every keep topic this gateway published (on a clean stop: an
    /// offline gateway keeps nothing connected).
    func clearAllKeeps() {
        for device in publishedKeeps.withLock({ $0.keys.sorted() }) {
            _ = try? client.publish(topics.keep(device), payload: [], qos: .atLeastOnce, retain: true)
        }
    }

    /// The time a message of another gateway speaks for: its own
    /// `timestamp` when it has one, else now.
    static func timestamp(of object: JSONField) -> Date {
        guard let text = (try? object["timestamp"].string()) ?? nil else { return Date() }
        // Events carry milliseconds (`…:00.120Z`), presence whole seconds.
        return (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601)) ?? Date()
    }
}
