import BlueZSimulator
import DBus
import ServiceLifecycle

/// With `--simulate`: the private bus, the simulator on it and its control
/// interface (`org.blegateway.Simulator1`, on a connection of its own, as
/// `bluez-sim` serves it: what moves the simulated world, a remote central
/// included); on shutdown (last of all) the simulator leaves the bus and the
/// bus stops.
struct SimulationService: Service {
    let daemon: BusDaemon
    let simulator: SimulatedBlueZ
    let control: Connection

    func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }

    func stop() async {
        control.close()
        await simulator.stop()
        simulator.connection.close()
        daemon.stop()
    }
}
