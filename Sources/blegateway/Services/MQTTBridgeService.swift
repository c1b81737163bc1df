import GatewayAPI
import Logging
import MQTT
import MQTTBridge
import ServiceLifecycle

/// The MQTT bridge over the API, made once the API is there (a broker it
/// cannot use stops the start) and handed over with its fleet attached;
/// it then connects (in the background, retrying with backoff), announces
/// `online`, publishes events and takes commands. On shutdown (first of
/// all, while Bluetooth still answers) ends its notification
/// subscriptions, publishes `offline` and disconnects.
struct MQTTBridgeService: GatewayService {
    let mqtt: MQTTSettings
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        guard let gateway = try? await handoffs.gateway.take() else { return }
        let bridge = try makeBridge(gateway)
        // The bridge is the fleet behind `/v1/fleet/…` (docs/fleet.md).
        if bridge.configuration.fleet { gateway.attachFleet(bridge) }
        handoffs.bridge.hand(bridge)
        let states = bridge.client.connectionStates()
        let reporter = Task { await report(states, of: bridge) }
        try await bridge.start()
        try? await gracefulShutdown()
        logger.info("stopping: MQTT bridge (publishing offline)")
        await bridge.stop()
        reporter.cancel()
    }

    private func makeBridge(_ gateway: Gateway) throws(StartupError) -> Bridge {
        if mqtt.bridge.commands, mqtt.client.effectiveCredentials == nil {
            logger.warning(
                "MQTT commands are on and the gateway logs in to the broker without credentials: whoever may publish on \(mqtt.bridge.base)/cmd/ drives your Bluetooth devices unless the broker's access rules say otherwise (docs/mqtt.md, Security)")
        }
        do {
            return try Bridge(gateway: gateway, mqtt: mqtt.client, configuration: mqtt.bridge, logger: logger)
        } catch {
            throw StartupError("cannot use the MQTT broker \(mqtt.client.broker): \(error)")
        }
    }

    /// The first failure after a connection (or at startup) and every
    /// refusal are warnings; the retries of an outage are debug lines.
    private func report(_ states: AsyncStream<ConnectionState>, of bridge: Bridge) async {
        let broker = bridge.client.configuration.broker
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
}
