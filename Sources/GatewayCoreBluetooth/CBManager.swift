import Foundation

/// The state of a central or peripheral manager, mapped from the gateway:
/// `.poweredOn` when its adapter is on, `.poweredOff` when off,
/// `.unsupported` when it has no adapter, `.unauthorized` when the API key
/// is missing or wrong, `.resetting` while BlueZ is unreachable, and
/// `.unknown` until the gateway has answered (or while it cannot be reached).
public enum CBManagerState: Int, Sendable {
    case unknown = 0
    case resetting = 1
    case unsupported = 2
    case unauthorized = 3
    case poweredOff = 4
    case poweredOn = 5
}

public enum CBManagerAuthorization: Int, Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    case allowedAlways = 3
}

/// What the central and peripheral managers share.
///
/// `@unchecked Sendable`: `state`, `lastGatewayError` and the waiters
/// change only on `queue`; the rest is immutable.
open class CBManager: NSObject, @unchecked Sendable {
    /// Set only on the manager's queue (see the subclasses' invariants).
    public internal(set) var state: CBManagerState = .unknown
    /// Whether the delegate has heard of the state once (it always does).
    var hasReportedState = false
    /// Why the gateway could not be used last (unreachable, a wrong API key).
    public internal(set) var lastGatewayError: GatewayError?
    /// The gateway decides who may use Bluetooth (its API key): a process
    /// is always allowed to try.
    public class var authorization: CBManagerAuthorization { .allowedAlways }
    public var authorization: CBManagerAuthorization { Self.authorization }

    /// The gateway this manager speaks to.
    public let gateway: GatewayClient?
    /// Through the gateway's fleet (`CBManagerOptionGatewayFleetKey`).
    public let fleet: Bool
    /// Why the gateway could not be used at all (a bad URL in the options).
    let configurationError: GatewayError?
    /// Where delegate methods are called, as the manager's `queue` argument said.
    public let queue: DispatchQueue

    init(queue: DispatchQueue?, options: [String: Any]?) {
        self.queue = queue ?? .main
        do {
            let location = try GatewayLocation(options: options)
            gateway = GatewayClient(location: location)
            fleet = location.fleet
            configurationError = nil
        } catch {
            gateway = nil
            fleet = false
            configurationError = error
        }
        super.init()
        lastGatewayError = configurationError
    }

    /// The state the gateway's answer to `GET /v1` means for a manager of
    /// `adapter` (the first adapter when nil).
    static func state(of info: GatewayJSON.Info, adapter: String?) -> CBManagerState {
        guard info.bluez.available else { return .resetting }
        guard let chosen = info.adapters.first(where: { $0.name == adapter }) ?? info.adapters.first else { return .unsupported }
        return chosen.powered ? .poweredOn : .poweredOff
    }

    /// Follows the gateway's events while the manager lives.
    var followTask: Task<Void, Never>?

    deinit { followTask?.cancel() }

    /// Stops following the gateway and closes the streams the manager
    /// holds (what the gateway keeps stays kept). Not Core Bluetooth's,
    /// whose managers live as long as their app.
    public func invalidate() { followTask?.cancel() }

    /// Tells the delegate of the state (on the queue): the subclasses' job.
    func reportState() {}

    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: body()) } }
    }

    func setState(_ state: CBManagerState) async {
        await onQueue {
            guard self.state != state || !self.hasReportedState else { return }
            self.hasReportedState = true
            self.state = state
            self.reportState()
            let waiters = self.stateWaiters
            self.stateWaiters = []
            for waiter in waiters { waiter.resume(returning: state) }
        }
    }

    /// Tasks waiting for the first state (on the queue).
    var stateWaiters: [CheckedContinuation<CBManagerState, Never>] = []

    /// Waits until the gateway has answered, and returns without error once
    /// the manager is `.poweredOn`; any other state is thrown as a
    /// `CBError` that says why (the gateway's problem when there was one).
    public func poweredOn() async throws(CBError) {
        let state = await withCheckedContinuation { continuation in
            queue.async {
                if self.hasReportedState { continuation.resume(returning: self.state) } else { self.stateWaiters.append(continuation) }
            }
        }
        guard state != .poweredOn else { return }
        let why = await onQueue { self.lastGatewayError }
        throw CBError(.unknown, detail: why?.detail ?? "the gateway's Bluetooth is \(state)", gatewayError: why)
    }

    /// Follows the gateway for the manager's lifetime: opens the event
    /// stream at `path`, then `refresh` reads what the manager needs and
    /// says the state (`restoring` the first time), and `handle` takes each
    /// event. When the stream fails or ends (the gateway restarts), it
    /// tries again once a second.
    func follow(
        _ path: String, query: [URLQueryItem],
        refresh: @Sendable (GatewayClient, _ restoring: Bool) async throws(GatewayError) -> Void,
        handle: @Sendable (ServerSentEvent, GatewayClient) async -> Void
    ) async {
        var restored = false
        while !Task.isCancelled {
            guard let gateway else {
                await setState(.unsupported)
                return
            }
            do {
                let events = try await gateway.events(path, query: query)
                try await refresh(gateway, !restored)
                restored = true
                for try await event in events { await handle(event, gateway) }
                if Task.isCancelled { return }
                await setState(.resetting)
            } catch {
                if Task.isCancelled { return }
                let failure = error as? GatewayError
                await onQueue { self.lastGatewayError = failure }
                await setState(failure.map(Self.state(for:)) ?? .unknown)
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    static func state(for error: GatewayError) -> CBManagerState {
        switch error.status {
        case 401?, 403?: .unauthorized
        case 503?: .resetting
        default: .unknown
        }
    }
}

/// Where the gateway is: a URL string (`http://gateway.local:8080`). Not
/// Core Bluetooth's: without it, `BLEGATEWAY_URL` from the environment.
public let CBManagerOptionGatewayURLKey = "BLEGatewayURL"
/// The gateway's API key. Without it, `BLEGATEWAY_API_KEY` from the environment.
public let CBManagerOptionGatewayAPIKeyKey = "BLEGatewayAPIKey"
/// The adapter a manager uses (`hci1`); without it, the gateway's default.
public let CBManagerOptionGatewayAdapterKey = "BLEGatewayAdapter"
/// `true`: a central reaches every device any gateway of the gateway's
/// fleet hears, each through the gateway that has it (`/v1/fleet/`). Without
/// it, `BLEGATEWAY_FLEET=1` from the environment.
public let CBManagerOptionGatewayFleetKey = "BLEGatewayFleet"
