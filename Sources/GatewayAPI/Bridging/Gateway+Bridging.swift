import BlueZ
import HTTPServer

// The public hooks a bridge to another transport (MQTT) uses: the events
// with their SSE JSON, the REST API in-process, and notification
// subscriptions that are not tied to an HTTP stream.
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

    /// The REST API for in-process callers (it carries the API key, so the
    /// caller is trusted).
    public func localAPI() -> LocalAPI {
        LocalAPI(router: router(), apiKey: configuration.apiKey)
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
    /// from `subscribeForBridge` throws when it ends by itself).
    public static func subscriptionEnded(by error: any Error) -> (reason: String, detail: String) {
        guard let error = error as? BlueZError else { return ("failed", "\(error)") }
        return (NotificationHub.reason(of: error), error.message)
    }

    /// Subscribes to a characteristic's notifications for a bridge: values
    /// then arrive as `characteristic-value` events (see `bridgedEvents`).
    /// `address`, `characteristic` (UUID or `handle:N`), `service` and
    /// `adapter` are read as the REST routes read them; a failure is the
    /// problem JSON the notifications route would answer, with `instance`.
    /// Ending the returned subscription's iteration ends the subscription.
    public func subscribeForBridge(
        address: String, characteristic: String, service: String?, adapter: String?, instance: String
    ) async -> Result<NotificationSubscription, BridgeProblem> {
        // Escaped as a client would, so a value cannot add parameters.
        func escaped(_ value: String) -> String {
            value.utf8.map { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                    UInt8(ascii: ":"):
                    return String(UnicodeScalar(byte))
                default:
                    let hex = String(byte, radix: 16, uppercase: true)
                    return "%" + (hex.count == 1 ? "0" + hex : hex)
                }
            }.joined()
        }
        var query: [String] = []
        if let service { query.append("service=\(escaped(service))") }
        if let adapter { query.append("adapter=\(escaped(adapter))") }
        var request = Request(method: .get, target: instance + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        request.parameters = Parameters([(name: "address", value: address), (name: "characteristic", value: characteristic)])
        var problem: Problem
        do {
            let (device, adapterName) = try deviceTarget(request)
            let selector = try request.attribute("characteristic", service: try request.serviceQuery())
            return .success(try await central.subscribe(to: selector, of: device, adapter: adapterName))
        } catch let error as Problem {
            problem = error
        } catch let error as BlueZError {
            problem = Problem(error)
        } catch {
            problem = Problem(.internalError, status: .internalServerError, detail: "\(error)")
        }
        problem.instance = instance
        return .failure(BridgeProblem(status: problem.status.code, json: problem.json))
    }
}

/// A failure for a bridge: the HTTP status it would have and its
/// `application/problem+json` body.
public struct BridgeProblem: Error, Sendable, Hashable {
    public let status: Int
    public let json: [UInt8]
}

extension BridgeProblem {
    /// `problem` (a bridge's reading of its input with `JSONField`),
    /// answered for `instance`.
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
