/// An MQTT client over libmosquitto that stays connected: it reconnects with
/// backoff when the broker goes away, subscribes again after each
/// reconnect, and keeps QoS 1/2 messages published meanwhile (bounded, see
/// `Configuration.outboxCapacity`) to deliver them after.
///
/// ```swift
/// let client = try Client(configuration: Configuration(
///     broker: try BrokerURL(parsing: "mqtt://127.0.0.1:1883"), clientID: "gateway-1"))
/// client.start()
/// _ = try await client.subscribe("cmd/#") { message in … }
/// try client.publish("state", payload: Array("up".utf8), qos: .atLeastOnce, retain: true)
/// await client.stop()
/// ```
///
/// Threads: a thread of the client's own (`mqtt-loop`) does all network
/// work and runs the message handlers; every method may be called from any
/// thread or task. Handlers must return quickly (hand long work to a task):
/// while one runs, the client reads nothing else.
public final class Client: Sendable {
    private let core: ClientCore

    /// Prepares a client; nothing connects before `start()`. Throws for a bad
    /// option or unreadable TLS files.
    public init(configuration: Configuration) throws {
        core = try ClientCore(configuration: configuration)
    }

    deinit {
        // A client dropped without `stop()`: ask the loop thread to end (it
        // holds the core until it has). The broker sees a clean disconnect.
        core.requestStop()
    }

    public var configuration: Configuration { core.configuration }

    /// Starts connecting in the background (once; later calls do nothing).
    /// Watch `connectionState` or `connectionStates()` to know when it is up.
    public func start() { core.start() }

    /// Disconnects cleanly (the broker discards the Will), ends the loop
    /// thread and waits for it. Messages still in the outbox are dropped.
    /// Publishing or subscribing afterwards throws `.stopped`.
    public func stop() async { await core.stop() }

    /// The connection's state now.
    public var connectionState: ConnectionState { core.connection }

    /// The connection's states from now on: first the current one, then each
    /// change, until the client stops. Each call makes a new stream.
    public func connectionStates() -> AsyncStream<ConnectionState> { core.observe() }

    /// Counters of what was published, acknowledged, queued, dropped and
    /// received.
    public var statistics: Statistics { core.statistics }

    /// Publishes a message without waiting for the network.
    ///
    /// QoS 0 goes out now if connected, else is dropped (and counted). QoS 1
    /// and 2 are handed to libmosquitto while fewer than
    /// `Configuration.inFlightLimit` wait for their acknowledgement, else
    /// held in the outbox (dropping its oldest when full); either way they
    /// are delivered after a reconnect. Under MQTT 3.1.1 `properties` are not
    /// sent. Throws for a topic with wildcards, a payload over the MQTT limit,
    /// or after `stop()`.
    @discardableResult
    public func publish(
        _ topic: String, payload: [UInt8], qos: QoS = .atMostOnce, retain: Bool = false,
        properties: MessageProperties = MessageProperties()
    ) throws -> PublishOutcome {
        try core.publish(
            OutgoingMessage(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties))
    }

    /// Subscribes to `filter` (`+` and `#` wildcards allowed); `handler` runs
    /// on the client's thread for each message whose topic matches, including
    /// retained ones. The subscription is made again after every reconnect.
    ///
    /// With `waitForAcknowledgement` (the default) this returns once the
    /// broker has acknowledged it, which, while disconnected, is after the
    /// next connection; it throws if the broker refuses it. Without, it
    /// returns at once.
    public func subscribe(
        _ filter: String, qos: QoS = .atLeastOnce, waitForAcknowledgement: Bool = true,
        handler: @escaping @Sendable (Message) -> Void
    ) async throws -> Subscription {
        try await core.subscribe(filter, qos: qos, waitForAcknowledgement: waitForAcknowledgement, handler: handler)
    }

    /// Ends a subscription (the broker is told once no other subscription of
    /// this client uses the same filter).
    public func unsubscribe(_ subscription: Subscription) { core.unsubscribe(subscription) }

    /// Waits until every QoS 1/2 message published so far has been
    /// acknowledged (nothing in flight, nothing queued), or `timeout` passes;
    /// returns whether it happened. For a clean shutdown after a last publish.
    public func waitUntilDelivered(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let statistics = core.statistics
            if statistics.inFlight == 0 && statistics.queued == 0 { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the client is connected, or `timeout` passes; returns
    /// whether it is.
    public func waitUntilConnected(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch core.connection {
            case .connected: return true
            case .stopped: return false
            default: try? await Task.sleep(for: .milliseconds(10))
            }
        }
        return core.connection == .connected
    }
}
