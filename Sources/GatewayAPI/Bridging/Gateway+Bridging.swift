import BlueZ
import HTTPServer

// The public hooks a bridge to another transport (MQTT) uses besides the
// core's commands (`core`): the events with their SSE JSON, the state its
// retained topics start from, and the API key check.
extension Gateway {
    /// The central's events from now on, each with the JSON that
    /// `GET /v1/events` carries (built for every event: take this only when a
    /// bridge is enabled). A consumer more than `bufferSize` events behind
    /// loses the oldest.
    public func bridgedEvents(bufferSize: Int = 16_384) -> AsyncStream<BridgedEvent> {
        let events = central.events(bufferSize: bufferSize)
        let (stream, continuation) = AsyncStream.makeStream(
            of: BridgedEvent.self, bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let pump = Task {
            for await event in events { continuation.yield(BridgedEvent(event)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    /// The state the retained topics of a bridge start from: a
    /// `bluez-state` event for BlueZ's reachability now, and an
    /// `adapter-state` event for each adapter (a bridge publishes them on
    /// each connection, before the events that change them).
    public func currentStateEvents() -> [BridgedEvent] {
        [BridgedEvent(.availability(central.availability))]
            + central.adapters().map { BridgedEvent(.adapterState(adapter: $0.id, $0.state)) }
    }

    /// The device `address` as the central knows it now, if it does.
    public func deviceSnapshot(_ address: String) -> Device? {
        guard let address = BluetoothAddress(address) else { return nil }
        return try? central.device(address)
    }

    /// Whether `presented` opens the API: it equals the API key (compared
    /// in constant time), or the gateway has no key.
    public func acceptsAPIKey(_ presented: String?) -> Bool {
        guard let key = configuration.apiKey, !key.isEmpty else { return true }
        guard let presented else { return false }
        return APIKeyMiddleware.constantTimeEquals(Array(presented.utf8), Array(key.utf8))
    }

    /// The `SubscriptionEnded` reason and detail a notification stream
    /// gives when its subscription ends with `error` (what a subscription
    /// from `GatewayCore.subscribe` throws when it ends by itself).
    public static func subscriptionEnded(by error: any Error) -> (reason: String, detail: String) {
        guard let error = error as? BlueZError else { return ("failed", "\(error)") }
        return (NotificationHub.reason(of: error), error.message)
    }
}

/// A failure for a bridge: the HTTP status it would have and its
/// `application/problem+json` body.
public struct BridgeProblem: Error, Sendable, Hashable {
    public let status: Int
    public let json: [UInt8]
}

extension BridgeProblem {
    /// `problem` (a bridge's reading of its input with `JSONField`, or the
    /// failure of a command), answered for `instance`.
    public init(_ problem: Problem, instance: String) {
        var problem = problem
        problem.instance = instance
        self.init(status: problem.status.code, json: problem.json)
    }

    /// A 400 `invalid-request` problem for a bridge's own input checks (a
    /// command payload that is not the JSON expected).
    public static func invalidRequest(_ detail: String, instance: String) -> BridgeProblem {
        var problem = Problem(.invalidRequest, status: .badRequest, detail: detail)
        problem.instance = instance
        return BridgeProblem(status: problem.status.code, json: problem.json)
    }

    /// A 401 `unauthorized` problem (no valid API key).
    public static func unauthorized(_ detail: String, instance: String) -> BridgeProblem {
        make(.unauthorized, .unauthorized, detail, instance)
    }

    /// A 413 `payload-too-large` problem.
    public static func payloadTooLarge(_ detail: String, instance: String) -> BridgeProblem {
        make(.payloadTooLarge, .contentTooLarge, detail, instance)
    }

    /// A 503 `unavailable` problem (too busy to take it now).
    public static func unavailable(_ detail: String, instance: String) -> BridgeProblem {
        make(.unavailable, .serviceUnavailable, detail, instance)
    }

    private static func make(_ kind: Problem.Kind, _ status: Status, _ detail: String, _ instance: String)
        -> BridgeProblem
    {
        var problem = Problem(kind, status: status, detail: detail)
        problem.instance = instance
        return BridgeProblem(status: problem.status.code, json: problem.json)
    }

    /// A 404 `not-found` problem (an unknown command).
    public static func notFound(_ detail: String, instance: String) -> BridgeProblem {
        var problem = Problem(.notFound, status: .notFound, detail: detail)
        problem.instance = instance
        return BridgeProblem(status: problem.status.code, json: problem.json)
    }
}
