import GatewayAPI
import Logging
import ServiceLifecycle

/// The API over the central; on shutdown (first of all) ends every open
/// stream with its documented last event, while the server still sends.
struct APIService: Service {
    let gateway: Gateway
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.info("stopping: ending \(gateway.openStreamCount) open stream(s) with their last events")
        gateway.stop()
        await gateway.stopPeripheral()
    }
}
