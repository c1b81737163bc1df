import BlueZSimulator
import DBus
import ServiceLifecycle

/// The simulator and its control connection as one service: runs until
/// SIGINT or SIGTERM (then leaves the bus cleanly), or until the bus goes
/// away (dbus-daemon stopped), when there is nothing left to serve and the
/// process ends, as bluetoothd's does.
struct SimulatorService: Service {
    let simulator: SimulatedBlueZ
    let control: Connection

    func run() async throws {
        await cancelWhenGracefulShutdown { [simulator] in
            _ = await simulator.connection.waitUntilClosed()
        }
        await simulator.stop()
        control.close()
    }
}
