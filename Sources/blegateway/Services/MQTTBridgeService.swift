import Logging
import MQTTBridge
import ServiceLifecycle

/// The MQTT bridge: connects (in the background, retrying with backoff),
/// announces `online`, publishes events and takes commands; on shutdown
/// (first of all, while Bluetooth still answers) ends its notification
/// subscriptions, publishes `offline` and disconnects.
struct MQTTBridgeService: Service {
    let bridge: Bridge
    let logger: Logger

    func run() async throws {
        let states = bridge.client.connectionStates()
        let broker = bridge.client.configuration.broker
        let reporter = Task { [logger] in
            // The first failure after a connection (or at startup) and every
            // refusal are warnings; the retries of an outage are debug lines.
            var warned = false
            for await state in states {
                switch state {
                case .connected:
                    logger.notice("MQTT: connected to \(broker) as \(bridge.configuration.base)")
                    warned = false
                case .disconnected(let reason):
                    if !warned || reason.hasPrefix("broker refused") {
                        logger.warning("MQTT: not connected to \(broker) (\(reason)); retrying with backoff")
                        warned = true
                    } else {
                        logger.debug("MQTT: not connected to \(broker) (\(reason)); retrying")
                    }
                default:
                    break
                }
            }
        }
        try await bridge.start()
        try? await gracefulShutdown()
        logger.info("stopping: MQTT bridge (publishing offline)")
        await bridge.stop()
        reporter.cancel()
    }
}
