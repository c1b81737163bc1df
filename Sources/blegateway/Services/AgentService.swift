import BlueZ
import ServiceLifecycle

/// The pairing agent, registered with bluetoothd before the group runs
/// (and again whenever BlueZ comes back); on shutdown it unregisters,
/// before the central stops.
struct AgentService: Service {
    let agent: PairingAgent

    func run() async throws {
        try? await gracefulShutdown()
        await agent.stop()
    }
}
