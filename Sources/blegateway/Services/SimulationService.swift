import BlueZSimulator
import DBus
import Logging
import ServiceLifecycle

/// With `--simulate`: the private bus, the simulator on it and its control
/// interface (`org.blegateway.Simulator1`, on a connection of its own, as
/// `bluez-sim` serves it: what moves the simulated world, a remote central
/// included), started while the store opens and handed over as the bus
/// to connect to; on shutdown (last but the store) the simulator leaves the
/// bus and the bus stops.
struct SimulationService: GatewayService {
    /// `SimulateArgument.builtIn` or a scenario file.
    let choice: String
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        do {
            try await startAndServe()
        } catch {
            try await handoffs.fail(with: error)
        }
    }

    private func startAndServe() async throws {
        let scenario = try loadScenario()
        let daemon: BusDaemon
        do {
            daemon = try BusDaemon()
        } catch {
            throw StartupError("--simulate needs dbus-daemon (Debian package dbus-daemon): \(error.message)")
        }
        let simulator: SimulatedBlueZ
        let control: Connection
        do {
            (simulator, control) = try await start(scenario, on: daemon)
        } catch {
            daemon.stop()
            throw StartupError("the simulator did not start: \(error)")
        }
        logger.info("simulating BlueZ on a private bus (\(daemon.address)) with \(choice == SimulateArgument.builtIn ? "the built-in scenario" : choice)")
        logger.info(
            "the simulated world answers on that bus: busctl --address=\(daemon.address) call org.blegateway.Simulator /org/blegateway/simulator org.blegateway.Simulator1 METHOD ... (docs/simulator.md)")
        handoffs.bus.hand(.address(daemon.address))
        try? await gracefulShutdown()
        control.close()
        await simulator.stop()
        simulator.connection.close()
        daemon.stop()
    }

    private func loadScenario() throws(StartupError) -> Scenario {
        guard choice != SimulateArgument.builtIn else { return .default }
        do {
            return try Scenario.load(path: choice)
        } catch {
            throw StartupError("the scenario \(choice) cannot be used: \(error)")
        }
    }

    /// The simulator and its control interface, each on a connection of its own.
    private func start(_ scenario: Scenario, on daemon: BusDaemon) async throws -> (SimulatedBlueZ, Connection) {
        let connection = try await Connection.connect(to: .address(daemon.address))
        let simulator = try await SimulatedBlueZ.start(on: connection, scenario: scenario)
        let control = try await Connection.connect(to: .address(daemon.address))
        do {
            try await SimulatorControl.export(simulator, on: control)
        } catch {
            control.close()
            await simulator.stop()
            throw error
        }
        return (simulator, control)
    }
}
