import BlueZ
import GatewayAPI
import GatewayCore
import Logging
import PersistedState
import ServiceLifecycle

/// The API over the central, made once the central and the store are
/// there, and restored from the store (kept connections, standing
/// subscriptions, the peripheral role) before it is handed over to the
/// server; on shutdown (first but the MQTT bridge) ends every open stream
/// with its documented last event, while the server still sends.
struct APIService: GatewayService {
    let configuration: GatewayConfiguration
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        let central: Central
        let store: Store?
        do {
            store = try await handoffs.store.take()
            central = try await handoffs.central.take()
        } catch {
            return
        }
        let gateway = Gateway(central: central, configuration: configuration, store: store, logger: logger)
        gateway.start()
        do {
            try await restore(gateway)
        } catch {
            gateway.stop()
            throw StartupError("the state store cannot be read: \(error.message)")
        }
        handoffs.gateway.hand(gateway)
        try? await gracefulShutdown()
        logger.info("stopping: ending \(gateway.openStreamCount) open stream(s) with their last events")
        gateway.stop()
        await gateway.stopPeripheral()
    }

    /// What the store kept from the last run: kept devices, standing
    /// subscriptions and the peripheral role (all the core's).
    private func restore(_ gateway: Gateway) async throws(StateStoreFailure) {
        let restored = try await gateway.core.restore()
        for address in restored.unreadableAddresses {
            logger.warning("the state store keeps a connection to '\(address)', which is not an address: skipped")
        }
        if restored.keptDevices > 0 {
            logger.info("keeping \(restored.keptDevices) device(s) connected, as before the restart")
        }
        if restored.subscriptions > 0 {
            logger.info("holding \(restored.subscriptions) standing subscription(s), as before the restart")
        }
        for skipped in restored.unreadablePublications {
            logger.warning(
                "the state store holds \(skipped.kind.rawValue) \(skipped.id), which this gateway cannot read (\(skipped.reason)): skipped")
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
