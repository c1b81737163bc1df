import AsyncPrimitives
import GatewayAPI
import Logging
import MQTT
import Synchronization

/// Publishes a gateway's events to an MQTT broker and takes commands from
/// it (docs/mqtt.md has the topics and payloads).
///
/// - `<prefix>/<id>/status`: `online` (retained) while the bridge runs,
///   `offline` (retained) after `stop()`, and the same as its Last Will.
/// - Events under `<prefix>/<id>/adapters/…` and `…/devices/<address>/…`,
///   each payload the JSON of the matching `GET /v1/events` event.
/// - With `configuration.commands`, commands on `<prefix>/<id>/cmd/<command>`,
///   answered MQTT 5 style on the request's response topic (under
///   `<prefix>/replies/`) with its correlation data; with the gateway's API
///   key in the user property `api-key` when it has one.
///
/// ```swift
/// let bridge = try Bridge(gateway: gateway, mqtt: mqttConfiguration,
///                         configuration: BridgeConfiguration(gatewayID: "hall"))
/// bridge.start()
/// …
/// await bridge.stop()
/// ```
public final class Bridge: Sendable {
    public let configuration: BridgeConfiguration
    /// The MQTT client (its statistics and connection state are useful to
    /// report).
    public let client: Client
    let gateway: Gateway
    let topics: Topics
    let tasks = Mutex<[Task<Void, Never>]>([])
    let throttle: Mutex<AdvertisementThrottle>
    /// Notification subscriptions made by `cmd/subscribe`, by key.
    let subscriptions = Mutex<[String: Task<Void, Never>]>([:])
    /// Leases held for other gateways' notification streams, by lease id
    /// (their subscriptions are in `subscriptions`).
    let heldLeases = Mutex<[String: HeldLease]>([:])
    /// Notification streams this gateway serves whose subscription another
    /// gateway holds, by lease id; and the last stream number given.
    let servedStreams = Mutex<(streams: [String: ServedStream], last: UInt64, renewed: ContinuousClock.Instant?)>(
        ([:], 0, nil))
    /// The fleet as the broker shows it, and the `any` requests seen.
    let fleet: Mutex<FleetView>
    let fleetRequests = Mutex<[String: FleetRequest]>([:])
    let presence: Mutex<PresenceTracker>
    /// The fleet as `/v1/fleet/…` shows it (`FleetAccess`).
    let directory: Mutex<FleetDirectory>
    /// Fleet commands sent through `FleetAccess.send`, by correlation data.
    let fleetReplies = Mutex<[[UInt8]: Promise<FleetAnswer, FleetError>]>([:])
    /// Where the fleet's events go once `/v1/fleet/events` follows them.
    let eventSink = Mutex<(@Sendable (FleetEvent) -> Void)?>(nil)
    /// The devices the fleet keeps, who holds them, and this gateway's part.
    let fleetKeeps = Mutex(FleetKeeping())
    /// The instant heartbeats count from (their payload is this gateway's
    /// own monotonic time, read only by itself).
    let clockBase = ContinuousClock.now
    /// The keep topics published (device to payload).
    let publishedKeeps = Mutex<[String: String]>([:])
    /// What Home Assistant has been told (with `--mqtt-homeassistant`).
    let homeAssistant = Mutex(HomeAssistantState())
    /// The retained `connection` topics published, and whether each says
    /// connected: a clean stop clears those, since the gateway can no
    /// longer vouch for a connection once it has gone.
    let connectionTopics = Mutex<[String: Bool]>([:])
    /// Commands running and waiting, bounded.
    let commandGate: CommandGate
    /// Refused commands, logged a few per interval.
    let floodLog: RateLimitedLog

    /// Prepares the bridge. The MQTT configuration's Will is replaced by the
    /// bridge's (`offline` on the status topic); an empty client id becomes
    /// `blegateway-<gateway id>`.
    public init(
        gateway: Gateway, mqtt: MQTT.Configuration, configuration: BridgeConfiguration,
        logger: Logger = Logger(label: "blegateway.mqtt")
    ) throws {
        guard !configuration.gatewayID.isEmpty,
            !configuration.gatewayID.contains(where: { "/+#".contains($0) }), configuration.gatewayID != "any",
            !configuration.topicPrefix.isEmpty, !configuration.topicPrefix.contains(where: { "+#".contains($0) })
        else {
            throw MQTTError(
                .invalidArgument, "a gateway id is one MQTT topic level (no /, + or #): '\(configuration.gatewayID)'")
        }
        self.configuration = configuration
        self.gateway = gateway
        self.topics = Topics(prefix: configuration.topicPrefix, base: configuration.base)
        self.throttle = Mutex(AdvertisementThrottle(interval: configuration.advertisementInterval))
        self.fleet = Mutex(
            FleetView(presenceFreshness: configuration.presenceFreshness, holdTime: configuration.claimHoldTime))
        self.directory = Mutex(FleetDirectory(presenceFreshness: configuration.presenceFreshness))
        self.presence = Mutex(
            PresenceTracker(
                minimumInterval: configuration.presenceMinimumInterval, refreshInterval: configuration.presenceRefresh))
        commandGate = CommandGate(
            concurrency: configuration.commandConcurrency, queueLength: configuration.commandQueueLength)
        floodLog = RateLimitedLog(logger: logger, level: .warning)
        var mqtt = mqtt
        // The broker drops what is far over the command limit instead of
        // handing it over; what is a little over is still answered 413.
        if mqtt.maximumPacketSize == nil {
            mqtt.maximumPacketSize = UInt32(clamping: configuration.commandPayloadLimit * 2)
        }
        if mqtt.clientID.isEmpty { mqtt.clientID = "blegateway-\(configuration.gatewayID)" }
        mqtt.will = Will(topic: topics.status, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
        self.client = try Client(configuration: mqtt)
    }

    /// Connects (in the background), announces `online` on every
    /// (re)connection, subscribes to the commands and starts publishing
    /// events. Events from before this call are not published.
    public func start() async throws {
        let states = client.connectionStates()
        let events = gateway.bridgedEvents()
        client.start()
        if configuration.commands {
            _ = try await client.subscribe(topics.commands, qos: .atLeastOnce, waitForAcknowledgement: false) {
                [weak self] message in
                self?.receiveCommand(message)
            }
        }
        if configuration.fleet { try await followFleet() }
        let status = topics.status
        let announce = Task { [weak self, client] in
            for await state in states where state == .connected {
                _ = try? client.publish(status, payload: Array("online".utf8), qos: .atLeastOnce, retain: true)
                self?.announceState()
                self?.announceHolds()
                self?.forgetPublishedSlots()
            }
        }
        let pump = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.publish(event)
            }
        }
        let interval = configuration.advertisementInterval
        let flusher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval / 4)
                guard let self else { return }
                let ready = self.throttle.withLock { $0.due(now: .now) }
                for item in ready {
                    _ = try? self.client.publish(item.topic, payload: Array(item.json.utf8), properties: Self.json)
                }
                self.expireFleetRequests(now: .now)
                self.publishKeepChanges()
                self.publishSlotsIfChanged()
                self.tendFleetKeeps(now: .now)
                self.tendLeases(now: .now)
            }
        }
        tasks.withLock { $0 += [announce, pump, flusher] }
        if configuration.fleet, configuration.presenceSource == .passive {
            let listener = listenForPresence()
            tasks.withLock { $0.append(listener) }
        }
    }

    /// Publishes `offline` (retained), waits up to `timeout` for it and any
    /// other QoS 1 message to be delivered, ends command subscriptions and
    /// disconnects cleanly.
    public func stop(timeout: Duration = .seconds(5)) async {
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        let notifications = subscriptions.withLock { subscriptions in
            defer { subscriptions.removeAll() }
            return Array(subscriptions.values)
        }
        for task in notifications { task.cancel() }
        heldLeases.withLock { $0.removeAll() }
        endServedStreams(reason: "gateway-stopping", detail: "the gateway is stopping")
        // Held devices go back to the fleet, disconnected, before this
        // gateway says it is offline.
        await releaseAllHolds()
        if client.connectionState.isConnected {
            clearAllPresence()
            clearAllKeeps()
            retireHomeAssistantLinks()
            for topic in connectionTopics.withLock({ $0.filter(\.value).keys.sorted() }) {
                _ = try? client.publish(topic, payload: [], qos: .atLeastOnce, retain: true)
            }
            _ = try? client.publish(topics.status, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
            _ = await client.waitUntilDelivered(timeout: timeout)
        }
        await client.stop()
    }

    /// MQTT commands running or waiting for their turn now.
    public var commandQueueDepth: Int { commandGate.depth }

    /// Publishes one event where `Topics` routes it.
    func publish(_ event: BridgedEvent) {
        offerToHomeAssistant(event)
        guard let route = topics.route(event, valueQoS: configuration.valueQoS) else { return }
        if event.type == "device-discovered" || event.type == "device-updated", let device = event.device {
            if let rssi = event.rssi { publishPresence(device: device, adapter: event.adapter, rssi: rssi) }
            noteHeardLocally(device)
            let now = ContinuousClock.now
            guard let item = throttle.withLock({ $0.offer(device: device, topic: route.topic, json: event.json, now: now) })
            else { return }
            _ = try? client.publish(
                item.topic, payload: Array(item.json.utf8), qos: route.qos, retain: route.retain, properties: Self.json)
            return
        }
        if event.type == "device-connected", let device = event.device { noteConnectedLocally(device) }
        if event.type == "device-lost", let device = event.device {
            throttle.withLock { $0.forget(device) }
            clearPresence(device: device)
        }
        if route.retain, event.device != nil {
            connectionTopics.withLock { $0[route.topic] = event.type != "device-disconnected" }
        }
        _ = try? client.publish(
            route.topic, payload: Array(event.json.utf8), qos: route.qos, retain: route.retain, properties: Self.json)
    }

    /// On each connection: BlueZ's reachability and each adapter's state as
    /// they are now (`bluez`, `adapters/<adapter>/state`, retained), which
    /// events then keep current; and the gateway's Home Assistant device.
    func announceState() {
        for event in gateway.currentStateEvents() {
            guard let route = topics.route(event, valueQoS: configuration.valueQoS) else { continue }
            _ = try? client.publish(
                route.topic, payload: Array(event.json.utf8), qos: route.qos, retain: route.retain, properties: Self.json)
        }
        announceGatewayToHomeAssistant()
    }

    /// Event payloads are JSON.
    static let json = MessageProperties(contentType: "application/json")
}
