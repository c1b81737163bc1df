import GatewayAPI
import Logging
import ServiceLifecycle

/// The API over the core, started once the core is running and restored
/// (`CoreService`), and handed over to the server; on shutdown (first but
/// the MQTT bridge) ends every open stream with its documented last event,
/// while the server still sends and before the core stops.
struct APIService: GatewayService {
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        guard let gateway = try? await handoffs.core.take() else { return }
        gateway.start()
        handoffs.gateway.hand(gateway)
        try? await gracefulShutdown()
        logger.info("stopping: ending \(gateway.openStreamCount) open stream(s) with their last events")
        gateway.stop()
    }
}
