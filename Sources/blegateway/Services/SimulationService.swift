import BlueZSimulator
import DBus
import ServiceLifecycle

/// With `--simulate`: the private bus and the simulator on it; on shutdown
/// (last of all) the simulator leaves the bus and the bus stops.
struct SimulationService: Service {
    let daemon: BusDaemon
    let simulator: SimulatedBlueZ

    func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }

    func stop() async {
        await simulator.stop()
        simulator.connection.close()
        daemon.stop()
    }
}
