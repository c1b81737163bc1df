import BlueZ
import GatewayAPI
import Logging
import ServiceLifecycle

/// The pairing agent, registered with bluetoothd once the API that answers
/// its questions is there (and again whenever BlueZ comes back); on
/// shutdown it unregisters, before the central stops.
struct AgentService: GatewayService {
    let configuration: PairingAgent.Configuration
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        let central: Central
        let gateway: Gateway
        do {
            central = try await handoffs.central.take()
            gateway = try await handoffs.gateway.take()
        } catch {
            return
        }
        let agent = PairingAgent(
            central: central, configuration: configuration,
            handler: { [core = gateway.core] request in await core.answerAgent(request) })
        do {
            try await agent.start()
        } catch {
            // Pairing that needs no question (Just Works) works without it.
            logger.warning("the pairing agent could not be registered with bluetoothd: \(error)")
        }
        handoffs.agent.hand(())
        try? await gracefulShutdown()
        await agent.stop()
    }
}
