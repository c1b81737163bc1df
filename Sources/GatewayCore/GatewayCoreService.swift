import Logging
import ServiceLifecycle

/// Runs the core in a `ServiceGroup`, ahead of its doors (the API and the
/// MQTT bridge), which then only translate: it follows the central's
/// events (into the event log) and the keeper's, takes up again what the
/// store kept (kept devices, standing subscriptions, the peripheral role),
/// says it is `ready`, and on graceful shutdown stops keeping (kept
/// devices stay connected for the next start) and unregisters what it
/// published from bluetoothd, while the bus connection is still open.
///
/// It starts following events before it restores, not after: the keeper's
/// events are "from now on", and the first steps of keeping a restored
/// device belong in the log.
public struct GatewayCoreService: Service {
    public let core: GatewayCore
    private let logger: Logger
    private let ready: @Sendable () -> Void

    /// A service for `core`; `ready` runs once it is restored (the doors
    /// may then be opened).
    public init(core: GatewayCore, logger: Logger, ready: @escaping @Sendable () -> Void) {
        self.core = core
        self.logger = logger
        self.ready = ready
    }

    /// Throws the `StateStoreFailure` of a store that cannot be read, once
    /// what started is stopped.
    public func run() async throws {
        core.start()
        do {
            log(try await core.restore())
        } catch {
            core.stop()
            throw error
        }
        ready()
        try? await gracefulShutdown()
        core.stop()
        let (applications, advertisements) = await core.stopPeripheral()
        if applications + advertisements > 0 {
            logger.info("unregistered \(applications) application(s) and \(advertisements) advertisement(s) from bluetoothd")
        }
    }

    /// What the store kept from the last run, taken up again.
    private func log(_ restored: Restoration) {
        for address in restored.unreadableAddresses {
            // What a damaged store holds is shown escaped, never as it is:
            // a newline in it would forge a log line.
            logger.warning("the state store keeps a connection to \(String(reflecting: address)), which is not an address: skipped")
        }
        if restored.keptDevices > 0 {
            logger.info("keeping \(restored.keptDevices) device(s) connected, as before the restart")
        }
        if restored.subscriptions > 0 {
            logger.info("holding \(restored.subscriptions) standing subscription(s), as before the restart")
        }
        for skipped in restored.unreadablePublications {
            logger.warning(
                "the state store holds \(skipped.kind.rawValue) \(String(reflecting: skipped.id)), which this gateway cannot read (\(skipped.reason)): skipped")
        }
        for waiting in restored.unregisteredPublications {
            logger.warning("\(waiting.kind.rawValue) \(waiting.id) on \(waiting.adapter) is not registered yet: \(waiting.reason)")
        }
        let published = (applications: restored.applications, advertisements: restored.advertisements)
        if published.applications + published.advertisements > 0 {
            logger.info(
                "publishing \(published.applications) application(s) and \(published.advertisements) advertisement(s), as before the restart")
        }
    }
}
